/** `POST /videofile2txt`, multipart with the video; a price query gives it or its whole seconds. */
import { VIDEO_UPLOAD } from '../rules.js';
import { whisperKind } from './whisper.js';

export const videofile2txt = whisperKind(
  'videofile2txt',
  { file: { field: 'video', rule: VIDEO_UPLOAD }, duration: 'integer' },
  ['video_file2text'],
);
