/**
 * Filler models, so the catalogue spans pages and a client that ignores pagination misses some:
 * endpoints the simulator serves and some it does not, in the shapes the real records vary in.
 */
import type { ModelSpec } from '../catalogue.js';
import { AUDIO_DEFAULTS, AUDIO_FEATURES, AUDIO_LIMITS, iso } from './txt2audio.js';

const FILLER_TYPES = ['txt2img', 'img2img', 'txt2audio', 'img2txt', 'txt2embedding'] as const;

export function fillerModel(index: number): ModelSpec {
  const type = FILLER_TYPES[index % FILLER_TYPES.length] ?? 'txt2img';
  const n = String(index + 1).padStart(2, '0');
  if (type === 'txt2audio') {
    return {
      name: `Sim Speech ${n}`, slug: `Sim_Speech_${n}`, types: ['txt2audio'],
      limits: AUDIO_LIMITS, features: AUDIO_FEATURES, defaults: { ...AUDIO_DEFAULTS, lang: 'en', voice: 'default' },
      languages: [iso('English', 'en')], priceFactor: 1.1,
    };
  }
  return {
    name: `Sim ${type} ${n}`, slug: `Sim_${type}_${n}`, types: index % 7 === 3 ? [type, 'img2img'] : [type],
    typesAsObject: index % 4 === 1, emptyInfo: index % 3 === 2,
  };
}
