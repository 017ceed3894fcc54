import type { JobKind } from './kind.js';
import { audioFile, whisperKind } from './transcribe.js';

/** Audio file to text: `POST /audiofile2txt`, multipart with the audio; priced by its length, never by uploading it. */
export const audiofile2txt: JobKind<'audiofile2txt'> = whisperKind({
  type: 'audiofile2txt',
  title: 'Audio file to text',
  content: { audio: audioFile },
  pricedBy: ['duration_seconds'],
  catalogueTypes: ['audio_file2text'],
});
