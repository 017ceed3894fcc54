/** `POST /vid2txt`, JSON: a video URL the service fetches; a price query gives the URL, never a length. */
import { whisperKind } from './whisper.js';

export const vid2txt = whisperKind('vid2txt', { url: 'video_url' }, ['video2text']);
