/**
 * The model catalogue the simulator serves: each kind's models (kinds/, the real slugs and limits of
 * docs/service.md), the shape variations the real service shows (`info: []`, `inference_types` as
 * an object), and filler models so the list spans several pages.
 */
import { fillerModel } from './kinds/filler.js';
import { SIM_KINDS } from './kinds/index.js';

export type SimVoice = Record<'name' | 'slug' | 'gender', string>;
export type SimLanguage = Pick<SimVoice, 'name' | 'slug'> & { voices: SimVoice[] };

export interface SimModel {
  name: string;
  slug: string;
  /** The kinds it serves: those listing it, or a filler's own. */
  types: string[];
  /** Serve `inference_types` as an object keyed by type, as some records do. */
  typesAsObject?: boolean;
  /** Serve `info` as `[]` (PHP's empty array), as records without info do. */
  emptyInfo?: boolean;
  limits: Record<string, number>;
  features: Record<string, unknown>;
  defaults: Record<string, unknown>;
  languages: SimLanguage[];
  /** LoRA models a text-to-image model offers (served as `loras`, only where there are any). */
  loras?: { name: string; display_name: string }[];
  /** Multiplies the base price, so models differ in price as they do at the service. */
  priceFactor: number;
}

/** A model as a kind's file writes it: what it leaves out is empty, its price factor 1. */
export type ModelSpec = Pick<SimModel, 'name' | 'slug'> & Partial<SimModel>;

const withDefaults = (spec: ModelSpec): SimModel =>
  ({ types: [], limits: {}, features: {}, defaults: {}, languages: [], priceFactor: 1, ...spec });

/**
 * The whole catalogue in serving order. Real models are spread through the filler so the
 * last of them sits past the first page of 25.
 */
export function buildCatalogue(extraModels: number): SimModel[] {
  const specs = [...new Set(SIM_KINDS.flatMap((kind): readonly ModelSpec[] => kind.models))];
  // A model lists the catalogue's names of the kinds it serves (a name two kinds share, once).
  const kindsOf = (spec: ModelSpec): string[] => [
    ...new Set(SIM_KINDS.filter((k) => k.models.includes(spec)).flatMap((k) => k.catalogueTypes ?? [k.type])),
  ];
  const real = specs.map((spec) => withDefaults({ ...spec, types: kindsOf(spec) }));
  const filler = Array.from({ length: Math.max(0, extraModels) }, (_, i) => withDefaults(fillerModel(i)));
  const out = [...filler];
  // Real model k goes to position k * total / real.length; those before it are already in place.
  real.forEach((model, k) => out.splice(Math.floor((k * (real.length + filler.length)) / real.length), 0, model));
  return out;
}

/** The record as the service serves it. */
export function modelToWire(model: SimModel): Record<string, unknown> {
  const inferenceTypes = model.typesAsObject
    ? Object.fromEntries(model.types.map((t) => [t, { slug: t }]))
    : model.types;
  return {
    name: model.name,
    slug: model.slug,
    inference_types: inferenceTypes,
    info: model.emptyInfo ? [] : { limits: model.limits, features: model.features, defaults: model.defaults },
    languages: model.languages,
    ...(model.loras === undefined ? {} : { loras: model.loras }),
    tags: [],
    status: 'active',
  };
}
