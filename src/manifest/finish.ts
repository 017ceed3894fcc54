import { resolve } from 'node:path';
import type { Txt2AudioParams } from '../api/types.js';
import { countChars, contentHash } from './content-hash.js';
import type { JobDraft } from './draft.js';
import { expectedGot, type ManifestIssue } from './errors.js';
import { checkImage, type FileCache, type FileCheck, readTextFile } from './files.js';
import type { Img2VideoJob, ImageRef, ResolvedJob, Txt2AudioJob } from './types.js';

export interface FinishContext {
  file: string;
  /** The manifest's folder: relative paths in it are resolved against this. */
  dir: string;
  cache: FileCache;
  issues: ManifestIssue[];
}

/** A resolved job without its id yet: ids are settled once every job is known. */
export type UnnamedJob = Omit<Txt2AudioJob, 'id' | 'idDerived'> | Omit<Img2VideoJob, 'id' | 'idDerived'>;

function fileIssue<T>(context: FinishContext, draft: JobDraft, field: string, written: string, check: FileCheck<T>): T | undefined {
  if (check.ok) return check.value;
  const at = draft.positions[field] ?? draft.start;
  const issue: ManifestIssue = {
    file: context.file,
    line: at.line,
    col: at.col,
    jobIndex: draft.index,
    field,
    ...expectedGot(check.expected, `${JSON.stringify(written)} (${check.detail})`),
  };
  if (check.hint !== undefined) issue.hint = check.hint;
  context.issues.push(issue);
  return undefined;
}

async function image(context: FinishContext, draft: JobDraft, field: string): Promise<ImageRef | undefined> {
  const written = draft.fields[field];
  if (typeof written !== 'string') return undefined;
  const info = fileIssue(context, draft, field, written, await checkImage(context.cache, resolve(context.dir, written)));
  return info === undefined ? undefined : { ...info, written };
}

function pick<K extends string>(fields: Record<string, unknown>, keys: readonly K[]): Record<K, unknown> {
  const picked: Record<string, unknown> = {};
  for (const key of keys) if (fields[key] !== undefined) picked[key] = fields[key];
  return picked as Record<K, unknown>;
}

const TXT2AUDIO_KEYS = ['model', 'voice', 'lang', 'speed', 'format', 'sample_rate'] as const;
const IMG2VIDEO_KEYS = ['model', 'width', 'height', 'steps', 'frames', 'fps', 'prompt', 'negative_prompt', 'guidance', 'seed'] as const;

async function finishTxt2Audio(context: FinishContext, draft: JobDraft): Promise<UnnamedJob | undefined> {
  let text = draft.fields['text'] as string | undefined;
  const textFile = draft.fields['text_file'];
  if (typeof textFile === 'string') {
    text = fileIssue(context, draft, 'text_file', textFile, await readTextFile(context.cache, resolve(context.dir, textFile)));
  }
  if (!draft.complete || text === undefined) return undefined;
  const params = pick(draft.fields, TXT2AUDIO_KEYS) as unknown as Txt2AudioParams;
  const base = { index: draft.index, position: draft.start, fieldPositions: draft.positions };
  const hash = contentHash({ type: 'txt2audio', params: { ...params }, text });
  const job = { ...base, type: 'txt2audio' as const, contentHash: hash, params, text, textChars: countChars(text) };
  return typeof textFile === 'string' ? { ...job, textFile } : job;
}

async function finishImg2Video(context: FinishContext, draft: JobDraft): Promise<UnnamedJob | undefined> {
  const [firstFrame, lastFrame] = await Promise.all([image(context, draft, 'first_frame_image'), image(context, draft, 'last_frame_image')]);
  const lastFailed = draft.fields['last_frame_image'] !== undefined && lastFrame === undefined;
  if (!draft.complete || firstFrame === undefined || lastFailed) return undefined;
  const params = pick(draft.fields, IMG2VIDEO_KEYS) as unknown as Img2VideoJob['params'];
  const images: Record<string, string> = { first_frame_image: firstFrame.sha256 };
  if (lastFrame !== undefined) images['last_frame_image'] = lastFrame.sha256;
  const hash = contentHash({ type: 'img2video', params: { ...params }, images });
  const job = { index: draft.index, position: draft.start, fieldPositions: draft.positions, type: 'img2video' as const, contentHash: hash, params, firstFrame };
  return lastFrame === undefined ? job : { ...job, lastFrame };
}

/** Reads the job's files (reporting every problem with them) and hashes its resolved content. */
export function finishJob(context: FinishContext, draft: JobDraft): Promise<UnnamedJob | undefined> {
  return draft.type === 'txt2audio' ? finishTxt2Audio(context, draft) : finishImg2Video(context, draft);
}

export type { ResolvedJob };
