import type { JobType } from './types.js';

/**
 * Where a value sits, for messages: 1-based line and column, in the manifest file unless `file`
 * names another (a source's CSV, TSV or JSONL file).
 */
export interface SourcePosition {
  line: number;
  col: number;
  file?: string | undefined;
}

/** Where a job's field got its value: on the job itself, or in `defaults.<type>`. */
export interface FieldPosition extends SourcePosition {
  fromDefaults?: boolean;
}

/**
 * A media file a job sends (image, audio or video), checked by its bytes before anything is sent,
 * with what it was found to be: pricing and the runner use these facts without reading it again.
 * The ledger keeps it as JSON; rows written before audio and video simply lack the optional facts.
 */
export interface MediaRef {
  /** Absolute, resolved against the manifest's folder (and through symlinks); `written` as the manifest has it. */
  path: string;
  written: string;
  /** The type its bytes showed, as the upload's part declares it. */
  contentType: string;
  bytes: number;
  sha256: string;
  /** Audio and video: its length in seconds, when its container states it. */
  durationSec?: number | undefined;
  /** Its frame size in pixels (an image's always; a video's when its container states it); absent in older rows. */
  width?: number | undefined;
  height?: number | undefined;
}

/**
 * A job as the manifest resolved it, whatever its kind: defaults merged, files read and checked,
 * an id given or derived. What each field means is its kind's business (jobs/<type>.ts).
 */
export interface ResolvedJob {
  /** The given id, or one derived from the content hash (`<type>-<first 16 hex of hash>`). */
  id: string;
  idDerived: boolean;
  type: JobType;
  /** Manifest order: its unit's position and its place in the unit (see manifest/read.ts). */
  index: number;
  /** 0-based place of an inline job in `jobs:` (what messages call job #n); undefined for a source's row. */
  inlineIndex?: number | undefined;
  /** sha256 hex over the resolved content: type, every parameter, text, media bytes. */
  contentHash: string;
  /** Every field sent with the request but text and files: model, voice, prompt, width … */
  params: Readonly<Record<string, unknown>>;
  /** The text a speech job speaks (given inline or read from `text_file`). */
  text?: string | undefined;
  /** Its length as the service counts it: Unicode code points. */
  textChars?: number | undefined;
  textFile?: string | undefined;
  /** The media files it sends, by field; a list field's files as `<field>.<n>` from 0. */
  media: Readonly<Record<string, MediaRef>>;
  /** Free labels for grouping and selecting (`tags:`); never sent. */
  tags?: readonly string[] | undefined;
  /** A part of a text split into several jobs: the id of the job it is a part of. */
  parentId?: string | undefined;
  /** Fields whose value is another job's result, by the key `media` would use (`image`, `images.1`, `text`): its id. */
  inputs?: Readonly<Record<string, string>> | undefined;
  /** Priced at a bound (params' facts, `textChars`) until its inputs exist (manifest/price-bound.ts). */
  priceBound?: boolean | undefined;
  position: SourcePosition;
  /** Where each field's value sits (a defaults entry for merged values), for catalogue messages. */
  fieldPositions: Record<string, FieldPosition>;
}

/**
 * What sending, pricing and naming a job need: its kind's request is made from these alone, so
 * a job read back from the ledger (runner/ingest.ts: jobFromRow) is sent exactly as resolved.
 */
export type SendableJob = Pick<ResolvedJob, 'id' | 'type' | 'params' | 'text' | 'textChars' | 'media'>;
