import type { Model } from '../api/types.js';
import { expectedGot, formatGot, type ManifestIssue, closest, quotedList } from './errors.js';
import { kindOf, type ReportProblem, type FieldPosition, type ResolvedJob } from '../jobs/index.js';

function unknownModelHint(given: string, models: readonly Model[], type: string): string {
  const byName = models.find((model) => model.name === given || model.name.toLowerCase() === given.toLowerCase());
  if (byName !== undefined) return `"${given}" is the display name; use the slug "${byName.slug}"`;
  const near = closest(given, models.map((model) => model.slug));
  if (near.length > 0) return `did you mean ${quotedList(near)}?`;
  const ofType = models.filter((model) => model.inferenceTypes.includes(type)).map((model) => model.slug);
  return ofType.length > 0 ? `models for ${type}: ${ofType.join(', ')}` : `the catalogue has no ${type} model`;
}

/** The model exists and makes this kind; then the kind's own checks (voices, bounds, features). */
function checkJob(job: ResolvedJob, models: readonly Model[], report: ReportProblem): void {
  const slug = String(job.params['model']);
  const model = modelOf(job, models);
  if (model === undefined) {
    report('model', `a model slug of the catalogue`, { value: slug }, unknownModelHint(slug, models, job.type));
    return;
  }
  if (!model.inferenceTypes.includes(job.type)) {
    const ofType = models.filter((other) => other.inferenceTypes.includes(job.type)).map((other) => other.slug);
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
    const at: FieldPosition = job.fieldPositions[field] ?? job.position;
    const words = 'text' in got ? got.text : formatGot(got.value);
    const issue: ManifestIssue = { file: at.file ?? manifestFile, line: at.line, col: at.col, jobId: job.id, field, ...expectedGot(expected, words) };
    if (job.inlineIndex !== undefined) issue.jobIndex = job.inlineIndex;
    if (at.fromDefaults === true) issue.fromDefaults = true;
    if (hint !== undefined) issue.hint = hint;
    issues.push(issue);
  });
  return issues;
}

/** The catalogue's record of a job's model, when it has one. */
export function modelOf(job: Pick<ResolvedJob, 'params'>, models: readonly Model[]): Model | undefined {
  const slug = String(job.params['model']);
  return models.find((candidate) => candidate.slug === slug);
}
