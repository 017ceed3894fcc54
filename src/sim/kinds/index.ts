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
import { txt2music } from './txt2music.js';
import { img2img } from './img2img.js';

export const SIM_KINDS = [txt2audio, txt2img, img2video, txt2video, txt2embedding, vidUpscale, txt2music, img2img] as const;

export type SimJobType = (typeof SIM_KINDS)[number]['type'];

export const simKind = (type: SimJobType): SimKind => SIM_KINDS.find((kind) => kind.type === type) as SimKind;
