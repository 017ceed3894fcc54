/** `POST /audiofile2txt`, multipart with the audio; a price query gives it or its whole seconds. */
import { AUDIO_UPLOAD } from '../rules.js';
import { whisperKind } from './whisper.js';

export const audiofile2txt = whisperKind(
  'audiofile2txt',
  { file: { field: 'audio', rule: AUDIO_UPLOAD }, duration: 'integer' },
  ['audio_file2text'],
);
