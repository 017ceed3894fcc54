import type { Model } from '../api/types.js';
import { catalogueTypesOf, kindOf, serves, type JobType, type ReportProblem, type ResolvedJob } from '../jobs/index.js';
import { contentHash, imageHashes } from './content-hash.js';
import { formatGot, type ManifestIssue, closest, quotedList } from './errors.js';
import { ID_PATTERN, SPLIT_MODES, type SplitMode } from './fields.js';
import { jobIssue } from './ids.js';
import { sourceDisplayPath } from './sources/rows.js';
import { partId, type SplitProblem, splitText } from './split.js';

function unknownModelHint(given: string, models: readonly Model[], type: JobType): string {
  const byName = models.find((model) => model.name === given || model.name.toLowerCase() === given.toLowerCase());
  if (byName !== undefined) return `"${given}" is the display name; use the slug "${byName.slug}"`;
  const near = closest(given, models.map((model) => model.slug));
  if (near.length > 0) return `did you mean ${quotedList(near)}?`;
  const ofType = models.filter((model) => serves(model, type)).map((model) => model.slug);
  return ofType.length > 0 ? `models for ${type}: ${ofType.join(', ')}` : `the catalogue has no ${type} model`;
}

/** The model exists and makes this kind; then the kind's own checks (voices, bounds, features). */
function checkJob(job: ResolvedJob, models: readonly Model[], report: ReportProblem): void {
  // The catalogue lists no models for it: the service alone judges its model.
  if (catalogueTypesOf([job.type]).length === 0) return;
  const slug = String(job.params['model']);
  const model = modelOf(job, models);
  if (model === undefined) {
    report('model', `a model slug of the catalogue`, { value: slug }, unknownModelHint(slug, models, job.type));
    return;
  }
  if (!serves(model, job.type)) {
    const ofType = models.filter((other) => serves(other, job.type)).map((other) => other.slug);
    const got = `${formatGot(model.slug)} (${model.inferenceTypes.join(', ') || 'no type'})`;
    report('model', `a model for ${job.type}`, { text: got }, `models for ${job.type}: ${ofType.join(', ')}`);
    return;
  }
  kindOf(job.type).checkModel(job, model, models, report);
}

/**
 * Checks a job's model, type, language, voice and numeric bounds against the service's catalogue
 * (fetched by the caller). Pure. Positions point at each value, in defaults when it came from there.
 */
export function catalogueIssues(job: ResolvedJob, models: readonly Model[], manifestFile: string): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  checkJob(job, models, (field, expected, got, hint) => {
    const words = 'text' in got ? got.text : formatGot(got.value);
    issues.push(jobIssue(job, manifestFile, field, { expected, got: words, hint }));
  });
  return issues;
}

export function modelOf(job: Pick<ResolvedJob, 'params'>, models: readonly Model[]): Model | undefined {
  const slug = String(job.params['model']);
  return models.find((candidate) => candidate.slug === slug);
}

/** A job cut into parts, or the job itself; and what kept it from being cut. */
export interface Parts {
  jobs: ResolvedJob[];
  issues: ManifestIssue[];
}

/** The `split:` a row asks for (its own, else its source entry's), when it is a valid one. */
export function splitModeOf(value: unknown): SplitMode | undefined {
  return (SPLIT_MODES as readonly unknown[]).includes(value) ? (value as SplitMode) : undefined;
}

/**
 * `split:` on a job whose text is over its model's `max_text`: the parts, each a job of its own
 * (`<id>.p001` …, the parent's id in `parentId`), priced and sent like any job. The limit is the
 * catalogue's, so without the catalogue (offline) the job stays whole. A text within the limit,
 * and a model without a limit, leave the job as it is. A sentence over the limit is a problem,
 * located in the text file (`chapters/07.txt:12:5`) or at the manifest's `text`.
 */
export function partsOf(job: ResolvedJob, mode: SplitMode | undefined, models: readonly Model[] | undefined, manifestFile: string): Parts {
  const whole = { jobs: [job], issues: [] };
  const splittable = kindOf(job.type).splittable;
  if (mode === undefined || splittable === undefined || models === undefined || job.text === undefined) return whole;
  const model = modelOf(job, models);
  const maxChars = model === undefined ? undefined : splittable.maxChars(model);
  if (maxChars === undefined || (job.textChars ?? 0) <= maxChars) return whole;
  const result = splitText(job.text, mode, maxChars);
  if (!result.ok) return { jobs: [], issues: [splitIssue(job, splittable.field, result.problem, manifestFile)] };
  const total = result.parts.length;
  const jobs = result.parts.map((part, n): ResolvedJob => {
    const id = partId(job.id, n + 1, total);
    const params = job.params;
    return {
      ...job,
      id,
      parentId: job.id,
      text: part.text,
      textChars: part.chars,
      contentHash: contentHash({
        type: job.type,
        params,
        text: part.text,
        images: imageHashes(job.media),
        inputs: job.inputs,
      }),
    };
  });
  const tooLong = jobs.find((part) => !ID_PATTERN.test(part.id));
  if (tooLong !== undefined) return { jobs: [], issues: [idTooLongIssue(job, tooLong.id, manifestFile)] };
  return { jobs, issues: [] };
}

function splitIssue(job: ResolvedJob, field: string, problem: SplitProblem, manifestFile: string): ManifestIssue {
  if (job.textFile === undefined) return jobIssue(job, manifestFile, field, problem);
  // In a text file the sentence has a place of its own; written in the manifest, the text's place is the field's.
  const at = { file: sourceDisplayPath(manifestFile, job.textFile), line: problem.line, col: problem.col };
  return jobIssue(job, manifestFile, 'text_file', problem, at);
}

function idTooLongIssue(job: ResolvedJob, partIdText: string, manifestFile: string): ManifestIssue {
  return jobIssue(job, manifestFile, 'id', {
    expected: 'an id short enough to name its parts (at most 128 characters with ".p001")',
    got: `"${partIdText}"`,
    hint: 'shorten the id: the parts of a split text are named <id>.p001, <id>.p002, …',
  });
}
