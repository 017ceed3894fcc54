import type { JobType } from '../jobs/types.js';
import type { Img2VideoPriceQuery, Txt2AudioParams } from '../api/types.js';

/** Where a value sits in the manifest file, for messages: 1-based line and column. */
export interface SourcePosition {
  line: number;
  col: number;
}

/** Where a job's field got its value: on the job itself, or in `defaults.<type>`. */
export interface FieldPosition extends SourcePosition {
  fromDefaults?: boolean;
}

export interface ImageRef {
  /** Absolute path, resolved against the manifest's folder. */
  path: string;
  /** As written in the manifest, for messages. */
  written: string;
  contentType: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/bmp' | 'image/webp';
  bytes: number;
  sha256: string;
}

interface JobBase {
  /** The given id, or one derived from the content hash (`<type>-<first 16 hex of hash>`). */
  id: string;
  idDerived: boolean;
  /** 0-based position in `jobs:`. */
  index: number;
  /** sha256 hex over the resolved content: type, every parameter, text, image bytes. */
  contentHash: string;
  position: SourcePosition;
  /** Where each field's value sits (a defaults entry for merged values), for catalogue messages. */
  fieldPositions: Record<string, FieldPosition>;
}

export interface Txt2AudioJob extends JobBase {
  type: 'txt2audio';
  params: Txt2AudioParams;
  text: string;
  /** Number of characters as the service counts them (Unicode code points). */
  textChars: number;
  /** As written, if the text came from a file. */
  textFile?: string | undefined;
}

export interface Img2VideoJob extends JobBase {
  type: 'img2video';
  params: Img2VideoPriceQuery & {
    prompt: string;
    negative_prompt?: string | undefined;
    guidance: number;
    seed: number;
  };
  firstFrame: ImageRef;
  lastFrame?: ImageRef | undefined;
}

export type ResolvedJob = Txt2AudioJob | Img2VideoJob;

export interface Manifest {
  /** Absolute path of the manifest file. */
  path: string;
  /** The path as the user gave it (relative if they gave a relative one), for messages. */
  displayPath: string;
  budgetUsd?: number | undefined;
  jobs: ResolvedJob[];
}

export type { JobType };
