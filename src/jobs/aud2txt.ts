import { url } from './fields.js';
import type { JobKind } from './kind.js';
import { whisperKind } from './transcribe.js';

/** Twitter Spaces audio to text: `POST /aud2txt`, JSON with the URL the service fetches; priced by that URL. */
export const aud2txt: JobKind<'aud2txt'> = whisperKind({
  type: 'aud2txt',
  title: 'Audio (a Twitter Spaces URL) to text',
  content: { audio_url: url('Twitter Spaces audio to transcribe') },
  pricedBy: ['audio_url'],
  catalogueTypes: ['audio2text'],
});
