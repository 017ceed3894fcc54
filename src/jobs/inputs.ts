import type { MediaKind } from '../media-type.js';
import { kindOf } from './index.js';
import type { FieldSpec } from './kind.js';
import type { JobType } from './types.js';

/**
 * Fields whose value may be another job's result (`{ from: <id> }` in a manifest): every media file
 * field (each item of a list field too) and every text of the job's content made with `text()`.
 * Not a text file's path, a URL or a parameter such as `model`.
 */
export function inputFields(type: JobType): readonly string[] {
  const { content, params } = kindOf(type);
  return Object.entries({ ...content, ...params }).flatMap(([name, spec]) => (mediaOf(spec).length > 0 ? [name] : []));
}

/**
 * The result media a field takes from another job, by its name or its key (`images.1`); none when
 * it takes no result. A media field takes what it takes as a file; a text field takes text.
 */
export function accepts(type: JobType, field: string): readonly MediaKind[] {
  const name = field.replace(/\.\d+$/, '');
  const { content, params } = kindOf(type);
  const spec = Object.hasOwn(content, name) ? content[name] : Object.hasOwn(params, name) ? params[name] : undefined;
  return spec === undefined ? [] : mediaOf(spec);
}

/** Whether a job of `upstream` makes what `field` of a `type` job takes. */
export function resultFits(type: JobType, field: string, upstream: JobType): boolean {
  return accepts(type, field).includes(kindOf(upstream).output.media);
}

function mediaOf(spec: FieldSpec): readonly MediaKind[] {
  if (spec.takesText === true) return ['text'];
  return typeof spec.file === 'object' ? (Object.keys(spec.file.maxBytes) as MediaKind[]) : [];
}
