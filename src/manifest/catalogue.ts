import type { Model } from '../api/types.js';
import { expectedGot, formatGot, type ManifestIssue } from './errors.js';
import { closest, quotedList } from './suggest.js';
import type { FieldPosition, Img2VideoJob, Manifest, ResolvedJob, Txt2AudioJob } from './types.js';

type Report = (field: string, expected: string, got: string, hint?: string) => void;

const VIDEO_BOUNDS = ['width', 'height', 'steps', 'frames', 'fps'] as const;

function limit(model: Model, key: string): number | undefined {
  const value = model.limits[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `between 30 and 120`, `exactly 1`, `at least 49`, or undefined when the model sets no bound. */
function boundsText(min: number | undefined, max: number | undefined): string | undefined {
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${min}` : `between ${min} and ${max}`;
  if (min !== undefined) return `at least ${min}`;
  return max === undefined ? undefined : `at most ${max}`;
}

function outside(value: number, min: number | undefined, max: number | undefined): boolean {
  return (min !== undefined && value < min) || (max !== undefined && value > max);
}

function unknownModelHint(given: string, models: readonly Model[], type: string): string {
  const byName = models.find((model) => model.name === given || model.name.toLowerCase() === given.toLowerCase());
  if (byName !== undefined) return `"${given}" is the display name; use the slug "${byName.slug}"`;
  const near = closest(given, models.map((model) => model.slug));
  if (near.length > 0) return `did you mean ${quotedList(near)}?`;
  const ofType = models.filter((model) => model.inferenceTypes.includes(type)).map((model) => model.slug);
  return ofType.length > 0 ? `models for ${type}: ${ofType.join(', ')}` : `the catalogue has no ${type} model`;
}

function checkSpeech(job: Txt2AudioJob, model: Model, report: Report): void {
  const { lang, voice, speed } = job.params;
  if (model.languages.length > 0) {
    const language = model.languages.find((candidate) => candidate.slug === lang);
    if (language === undefined) {
      report('lang', `a language of ${model.slug}`, formatGot(lang), `languages of ${model.slug}: ${model.languages.map((l) => l.slug).join(', ')}`);
    } else if (!language.voices.some((candidate) => candidate.slug === voice)) {
      const elsewhere = model.languages.find((other) => other.voices.some((candidate) => candidate.slug === voice));
      const also = elsewhere === undefined ? '' : ` (${voice} is a voice for ${elsewhere.slug})`;
      report('voice', `a voice of ${model.slug} for ${lang}`, formatGot(voice), `voices for ${lang}: ${language.voices.map((v) => v.slug).join(', ')}${also}`);
    }
  }
  const [minSpeed, maxSpeed] = [limit(model, 'min_speed'), limit(model, 'max_speed')];
  const speedBounds = boundsText(minSpeed, maxSpeed);
  if (speedBounds !== undefined && outside(speed, minSpeed, maxSpeed)) {
    report('speed', `a number ${speedBounds} for ${model.slug}`, formatGot(speed));
  }
  const [minText, maxText] = [limit(model, 'min_text'), limit(model, 'max_text')];
  const textBounds = boundsText(minText, maxText);
  if (textBounds !== undefined && outside(job.textChars, minText, maxText)) {
    const hint = maxText !== undefined && job.textChars > maxText ? 'split the text into several jobs' : undefined;
    report(job.textFile === undefined ? 'text' : 'text_file', `${textBounds} characters for ${model.slug}`, `${job.textChars} characters`, hint);
  }
}

function checkVideo(job: Img2VideoJob, model: Model, models: readonly Model[], report: Report): void {
  for (const field of VIDEO_BOUNDS) {
    const [min, max] = [limit(model, `min_${field}`), limit(model, `max_${field}`)];
    const bounds = boundsText(min, max);
    if (bounds !== undefined && outside(job.params[field], min, max)) {
      const expected = min !== undefined && min === max ? bounds : `a whole number ${bounds}`;
      report(field, `${expected} for ${model.slug}`, formatGot(job.params[field]));
    }
  }
  if (job.lastFrame !== undefined && model.features['supports_last_frame'] !== true) {
    const able = models.filter((other) => other.features['supports_last_frame'] === true).map((other) => other.slug);
    const hint = able.length > 0 ? `remove it, or use a model that supports it: ${able.join(', ')}` : 'remove it';
    report('last_frame_image', `no last frame for ${model.slug} (it does not support one)`, formatGot(job.lastFrame.written), hint);
  }
}

function checkJob(job: ResolvedJob, models: readonly Model[], report: Report): void {
  const model = models.find((candidate) => candidate.slug === job.params.model);
  if (model === undefined) {
    report('model', `a model slug of the catalogue`, formatGot(job.params.model), unknownModelHint(job.params.model, models, job.type));
    return;
  }
  if (!model.inferenceTypes.includes(job.type)) {
    const ofType = models.filter((other) => other.inferenceTypes.includes(job.type)).map((other) => other.slug);
    report('model', `a model for ${job.type}`, `${formatGot(model.slug)} (${model.inferenceTypes.join(', ') || 'no type'})`, `models for ${job.type}: ${ofType.join(', ')}`);
    return;
  }
  if (job.type === 'txt2audio') checkSpeech(job, model, report);
  else checkVideo(job, model, models, report);
}

// A wrong value in defaults would otherwise be reported once per job using it: thousands of lines.
function collapseDefaults(issues: readonly ManifestIssue[]): ManifestIssue[] {
  const firsts = new Map<string, { issue: ManifestIssue; more: number }>();
  const kept: ManifestIssue[] = [];
  for (const issue of issues) {
    const key = `${issue.line}:${issue.col}:${issue.field ?? ''}:${issue.message}`;
    const seen = issue.fromDefaults === true ? firsts.get(key) : undefined;
    if (seen !== undefined) {
      seen.more += 1;
      continue;
    }
    const copy = { ...issue };
    if (issue.fromDefaults === true) firsts.set(key, { issue: copy, more: 0 });
    kept.push(copy);
  }
  for (const { issue, more } of firsts.values()) {
    if (more === 0) continue;
    const also = `the same for ${more} more job${more === 1 ? '' : 's'} using this default`;
    issue.hint = issue.hint === undefined ? also : `${issue.hint}; ${also}`;
  }
  return kept;
}

/**
 * Checks models, types, languages, voices and numeric bounds against the service's catalogue
 * (fetched by the caller). Pure. Positions point at each value, in defaults when it came from there.
 */
export function checkAgainstCatalogue(manifest: Manifest, models: Model[]): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const file = manifest.displayPath ?? manifest.path;
  for (const job of manifest.jobs) {
    checkJob(job, models, (field, expected, got, hint) => {
      const at: FieldPosition = job.fieldPositions?.[field] ?? job.position;
      const issue: ManifestIssue = { file, line: at.line, col: at.col, jobIndex: job.index, jobId: job.id, field, ...expectedGot(expected, got) };
      if (at.fromDefaults === true) issue.fromDefaults = true;
      if (hint !== undefined) issue.hint = hint;
      issues.push(issue);
    });
  }
  return collapseDefaults(issues);
}
