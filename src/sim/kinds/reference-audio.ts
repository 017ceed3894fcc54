/** What speech and music share: a recording to learn from (a voice to clone, a style to follow). */
import { mediaFacts } from '../../media-type.js';
import { attribute, type Check, type UploadRule } from '../rules.js';

/** The document names MP3, Ogg and M4A; like the service's own tester, any audio passes by its bytes. */
const REFERENCE_UPLOAD: UploadRule = { kinds: ['audio'], types: 'mp3, ogg, m4a', maxKb: 15 * 1024 };

/** The recording's sha256 once its type, size and length pass; null when left out. */
export async function referenceAudio(
  c: Check,
  field: string,
  required: boolean,
  seconds: { min: number; max: number },
): Promise<string | null | undefined> {
  const upload = await c.upload(field, required, REFERENCE_UPLOAD);
  if (!upload) return upload;
  const { durationSec } = await mediaFacts(upload.bytes);
  const name = attribute(field);
  if (durationSec === undefined) return c.add(field, `The ${name} field could not be read.`);
  if (durationSec < seconds.min || durationSec > seconds.max) {
    return c.add(field, `The ${name} must be between ${seconds.min} and ${seconds.max} seconds long.`);
  }
  return upload.sha256;
}
