/**
 * What the kinds that take a video file share (upscaling, background removal, replacement): the
 * facts read from its bytes, as the service reads them, and the size a price query may give instead.
 */
import { mediaFacts } from '../../media-type.js';
import { type Check, isBlank, VIDEO_UPLOAD } from '../rules.js';

/** A video's frame size and length; each missing one in the bag. */
export type VideoSize = Record<'width' | 'height' | 'duration', number | undefined> & { videoSha256?: string };

/** The uploaded video's frame size and length, as the service reads them; the video is required. */
export async function measured(c: Check): Promise<VideoSize> {
  const unread = { width: undefined, height: undefined, duration: undefined };
  const upload = await c.upload('video', true, VIDEO_UPLOAD);
  if (!upload) return unread;
  const facts = await mediaFacts(upload.bytes);
  if (facts.width === undefined || facts.height === undefined || facts.durationSec === undefined) {
    return c.add('video', 'The video field could not be read.') ?? unread;
  }
  return { width: facts.width, height: facts.height, duration: facts.durationSec, videoSha256: upload.sha256 };
}

/** A price query gives the video itself, or its size (and length) in fields. */
export const givesVideo = (c: Check): boolean => c.fields['video'] instanceof Blob;

/** A side in pixels, as a whole number from 1. */
export const side = (c: Check, field: string): number | undefined => c.number(field, { integer: true, min: 1 });

/** A whole number a request may leave out (null then). */
export const optionalInt = (c: Check, field: string, min: number): number | null | undefined =>
  isBlank(c.fields[field]) ? null : c.number(field, { integer: true, min });
