import { url } from './fields.js';
import type { JobKind } from './kind.js';
import { whisperKind } from './transcribe.js';

/** Video to text: `POST /vid2txt`, JSON with the URL the service fetches; priced by that URL alone. */
export const vid2txt: JobKind<'vid2txt'> = whisperKind({
  type: 'vid2txt',
  title: 'Video (a YouTube, TikTok, Twitch, Kick or X URL) to text',
  content: { video_url: url('Public video to transcribe') },
  pricedBy: ['video_url'],
  catalogueTypes: ['video2text'],
});
