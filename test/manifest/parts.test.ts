import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../src/api/types.js';
import { ManifestError } from '../../src/manifest/errors.js';
import { loadManifest } from '../support/load-manifest.js';
import { openManifest } from '../../src/manifest/open.js';
import { ingestManifest } from '../../src/runner/ingest.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FIXTURES } from './helpers.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';

// In this catalogue Kokoro takes at most 40 characters a job.
async function models(): Promise<Model[]> {
  return JSON.parse(await readFile(`${FIXTURES}/catalogue/models.json`, 'utf8')) as Model[];
}

const HEAD = ['version: 1', 'defaults:', '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }'];
// Three sentences of 28, 26 and 31 characters: no two fit in one part together.
const LONG = 'The cat sat down on the mat. The dog ran off very fast. A bird sang there all day long.';

async function write(dir: string, lines: string[], name = 'book.yaml'): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `${[...HEAD, ...lines].join('\n')}\n`);
  return file;
}

async function problemsOf(file: string, catalogue?: Model[]): Promise<string> {
  try {
    await loadManifest(file, catalogue === undefined ? {} : { models: catalogue });
    return '';
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return error.message;
  }
}

describe('split: a text over the model limit becomes parts', () => {
  const workspace = useWorkspace();

  it('cuts between sentences into <id>.p001…, each a job with the parent named, the rest of the job unchanged', async () => {
    const file = await write(workspace.dir, ['jobs:', `  - { id: story, type: txt2audio, text: "${LONG}", split: sentences, tags: [book] }`]);
    const { jobs } = await loadManifest(file, { models: await models() });
    expect(jobs.map((job) => [job.id, job.parentId, job.text, job.textChars])).toEqual([
      ['story.p001', 'story', 'The cat sat down on the mat.', 28],
      ['story.p002', 'story', 'The dog ran off very fast.', 26],
      ['story.p003', 'story', 'A bird sang there all day long.', 31],
    ]);
    expect(new Set(jobs.map((job) => job.contentHash)).size).toBe(3);
    for (const job of jobs) {
      expect(job.params).toEqual({ model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'wav', sample_rate: 24000 });
      expect(job.tags).toEqual(['book']);
    }
  });

  it('leaves a text within the limit, a job without split, and any job read offline whole', async () => {
    const file = await write(workspace.dir, ['jobs:', '  - { id: short, type: txt2audio, text: "Fits well.", split: sentences }', `  - { id: offline, type: txt2audio, text: "${LONG}", split: paragraphs }`]);
    expect((await loadManifest(file)).jobs.map((job) => [job.id, job.parentId])).toEqual([
      ['short', undefined],
      ['offline', undefined],
    ]);
    const online = await loadManifest(file, { models: await models() });
    expect(online.jobs.map((job) => job.id)).toEqual(['short', 'offline.p001', 'offline.p002', 'offline.p003']);
  });

  it('reports a problem of the parts once, for the job written, not once per part', async () => {
    const file = await write(workspace.dir, ['jobs:', `  - { id: story, type: txt2audio, text: "${LONG}", split: sentences, voice: bf_emma }`]);
    const message = await problemsOf(file, await models());
    expect(message.split('\n').filter((line) => line.includes('voice'))).toEqual([
      expect.stringMatching(/book\.yaml:5:\d+ job "story" \(#1\) voice: expected a voice of Kokoro for en-us, got "bf_emma"/),
    ]);
  });

  it("holds the split job's own id: it names the joined result and the playlist", async () => {
    const file = await write(workspace.dir, [
      'jobs:',
      `  - { id: story, type: txt2audio, text: "${LONG}", split: sentences }`,
      '  - { id: Story, type: txt2audio, text: "Another one." }',
      '  - { id: story.p002, type: txt2audio, text: "And another." }',
    ]);
    const message = await problemsOf(file, await models());
    expect(message).toMatch(/book\.yaml:6:\d+ job "Story" \(#2\) id: expected a unique id, got "Story" \(the job at .*book\.yaml:5:\d+ has "story"\)/);
    expect(message).toMatch(/book\.yaml:5:\d+ job "story.p002" .*id: expected a unique id|book\.yaml:7:\d+ job "story.p002" \(#3\) id: expected a unique id/);
  });

  it('the ledger holds a split id across runs, when the source with the split job is not read again', async () => {
    const dir = workspace.dir;
    await writeFile(path.join(dir, 'story.jsonl'), `${JSON.stringify({ id: 'story', text: LONG, split: 'sentences' })}\n`);
    const base = ['sources:', '  - jsonl: story.jsonl', '    type: txt2audio'];
    const first = await write(dir, base);
    const ledger = openMemoryLedger();
    try {
      const catalogue = await models();
      await ingestManifest({ manifest: await openManifest(first), ledger, models: catalogue });
      const second = await write(dir, ['jobs:', '  - { id: STORY, type: txt2audio, text: "Taken already." }', ...base]);
      const error = await ingestManifest({ manifest: await openManifest(second), ledger, models: catalogue }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ManifestError);
      expect((error as ManifestError).message).toMatch(/job "STORY" \(#1\) id: expected a unique id, got "STORY" \(the job at .*story\.jsonl:1:1 has "story"\)/);
      expect((await ledger.readParts('story')).map((part) => part.id)).toEqual(['story.p001', 'story.p002', 'story.p003']);
    } finally {
      await ledger.close();
    }
  });
});
