import type { JobKind } from './kind.js';
import { videoFile, whisperKind } from './transcribe.js';

/** Video file to text: `POST /videofile2txt`, multipart with the video; priced by its length, never by uploading it. */
export const videofile2txt: JobKind<'videofile2txt'> = whisperKind({
  type: 'videofile2txt',
  title: 'Video file to text',
  content: { video: videoFile },
  pricedBy: ['duration_seconds'],
  catalogueTypes: ['video_file2text'],
});
