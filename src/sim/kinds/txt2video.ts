/** Text to video: `POST /txt2video`, JSON, no images; the result is an MP4. */
import { videoKind } from './video.js';

export const txt2video = videoKind('txt2video');
