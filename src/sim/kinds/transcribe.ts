/**
 * `POST /transcribe`, multipart with exactly one of a URL or a file (audio or video); a price query
 * may give the length instead. No catalogue type of its own: the Whisper models serve it under all four.
 */
import { whisperKind } from './whisper.js';

const SOURCE_UPLOAD = {
  kinds: ['audio', 'video'],
  types: 'aac, mpeg, ogg, webm, mp4, mov, avi, wmv',
  maxKb: 50 * 1024,
} as const;

export const transcribe = whisperKind(
  'transcribe',
  { url: 'source_url', file: { field: 'source_file', rule: SOURCE_UPLOAD }, duration: 'number' },
  ['audio2text', 'video2text', 'audio_file2text', 'video_file2text'],
);
