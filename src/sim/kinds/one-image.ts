/**
 * What the kinds that take one `image` share (background removal, upscaling, OCR): a submit
 * carries the image; a price query carries it or its `width` and `height`, and either way the
 * price follows its sides, in megapixels.
 */
import { IMAGE_SIDE_PX } from '../../image-sides.js';
import type { Check } from '../rules.js';

export interface OneImage {
  width: number | undefined;
  height: number | undefined;
  imageSha256: string | null | undefined;
}

export async function oneImage(c: Check, forPrice: boolean): Promise<OneImage> {
  const given = c.fields['image'];
  if (forPrice && (given === undefined || given === null || given === '')) {
    const side = { integer: true, min: IMAGE_SIDE_PX.min, max: IMAGE_SIDE_PX.max };
    return { width: c.number('width', side), height: c.number('height', side), imageSha256: null };
  }
  const imageSha256 = await c.image('image', true);
  const sides = imageSha256 ? await c.sides('image') : undefined;
  return { width: sides?.width, height: sides?.height, imageSha256: forPrice ? null : imageSha256 };
}

export const megapixels = (p: { width: number; height: number }): number => (p.width * p.height) / 1e6;

/** Their submit limits: 5 a minute and 100 a day on Basic (OCR: 50 a day). */
export const onePerImagePlans = (perDay: number) => ({ basic: { perMinute: 5, perDay }, premium: { perMinute: 300 } });
