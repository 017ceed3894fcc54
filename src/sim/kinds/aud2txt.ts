/** `POST /aud2txt`, JSON: a Twitter Spaces URL the service fetches; a price query gives it or the length. */
import { whisperKind } from './whisper.js';

export const aud2txt = whisperKind('aud2txt', { url: 'audio_url', duration: 'number' }, ['audio2text']);
