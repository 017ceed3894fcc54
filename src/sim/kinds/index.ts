/**
 * The endpoints the simulator serves: one file each in this folder, one line each here. The
 * catalogue serves their models in this order, spread through the filler (so the last kinds'
 * models sit past the first page).
 */
import { img2video } from './img2video.js';
import type { SimKind } from './kind.js';
import { txt2audio } from './txt2audio.js';
import { txt2img } from './txt2img.js';
import { txt2video } from './txt2video.js';
import { txt2embedding } from './txt2embedding.js';
import { vidUpscale } from './vid-upscale.js';
import { imgRmbg } from './img-rmbg.js';
import { imgUpscale } from './img-upscale.js';
import { img2txt } from './img2txt.js';
import { vidRmbg } from './vid-rmbg.js';
import { videoReplace } from './video-replace.js';
import { aud2video } from './aud2video.js';
import { transcribe } from './transcribe.js';
import { aud2txt } from './aud2txt.js';
import { vid2txt } from './vid2txt.js';
import { audiofile2txt } from './audiofile2txt.js';
import { videofile2txt } from './videofile2txt.js';
import { txt2music } from './txt2music.js';
import { img2img } from './img2img.js';

export const SIM_KINDS = [
  txt2audio,
  txt2img,
  img2video,
  txt2video,
  txt2embedding,
  vidUpscale,
  imgRmbg,
  imgUpscale,
  img2txt,
  vidRmbg,
  videoReplace,
  aud2video,
  transcribe,
  aud2txt,
  vid2txt,
  audiofile2txt,
  videofile2txt,
  txt2music,
  img2img,
] as const;

export type SimJobType = (typeof SIM_KINDS)[number]['type'];

export const simKind = (type: SimJobType): SimKind => SIM_KINDS.find((kind) => kind.type === type) as SimKind;
