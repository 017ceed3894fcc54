/**
 * An image's width and height from its header, and the sides the service takes of an input image
 * (docs/service.md): the manifest refuses an image outside them before anything is sent, and the
 * simulator as the service does.
 */
import { imageSize } from 'image-size';

export const IMAGE_SIDE_PX = { min: 64, max: 5000 } as const;

export type ImageSides = { width: number; height: number };

/** Undefined when its header does not say (a truncated or damaged file of a known type). */
export function imageSides(bytes: Uint8Array): ImageSides | undefined {
  try {
    const { width, height } = imageSize(bytes);
    return width === undefined || height === undefined ? undefined : { width, height };
  } catch {
    return undefined;
  }
}

export const sidesAllowed = ({ width, height }: ImageSides): boolean =>
  Math.min(width, height) >= IMAGE_SIDE_PX.min && Math.max(width, height) <= IMAGE_SIDE_PX.max;
