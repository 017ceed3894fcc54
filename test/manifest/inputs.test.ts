import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Model } from '../../src/api/types.js';
import type { ResolvedJob } from '../../src/jobs/index.js';
import { accepts, inputFields, resultFits } from '../../src/jobs/inputs.js';
import { contentHash } from '../../src/manifest/content-hash.js';
import { ManifestError } from '../../src/manifest/errors.js';
import { checkGraph, type InputRef } from '../../src/manifest/graph.js';
import { loadManifest } from '../support/load-manifest.js';
import { FIXTURES } from './helpers.js';

const HEAD = `version: 1
defaults:
  txt2img: { model: Flux1schnell, width: 512, height: 512, steps: 4, seed: 1, guidance: 0 }
  img2video: { model: Ltx2_3_22B_Dist_INT8, width: 768, height: 432, steps: 8, frames: 97, fps: 24, guidance: 1, seed: 3 }
  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }
  img-upscale: { model: RealESRGAN_x4plus }
  img-rmbg: { model: Ben2 }
  img2img: { model: QwenImageEdit_Plus_NF4, steps: 8, seed: 1 }
  transcribe: { model: WhisperLargeV3, include_ts: false }
  vid2txt: { model: WhisperLargeV3, include_ts: false }
jobs:
`;

let dir: string;
let models: Model[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mediabatch-inputs-'));
  await mkdir(path.join(dir, 'photos'));
  for (const name of ['beach.png', 'fog.jpeg']) await copyFile(`${FIXTURES}/valid/images/${name}`, path.join(dir, 'photos', name));
  const catalogue = JSON.parse(await readFile(`${FIXTURES}/catalogue/models.json`, 'utf8')) as Model[];
  const kokoro = catalogue.find((model) => model.slug === 'Kokoro') as Model;
  // Whisper as the service lists it (no limits), and a model that states its longest file.
  const whisper = (slug: string, limits: Model['limits']): Model => ({
    ...kokoro,
    slug,
    name: slug,
    inferenceTypes: ['audio2text', 'video2text', 'audio_file2text', 'video_file2text'],
    limits,
    languages: [],
  });
  const editor = { ...whisper('QwenImageEdit_Plus_NF4', { max_input_images: 3 }), inferenceTypes: ['img2img'] };
  models = [...catalogue, whisper('WhisperLargeV3', {}), whisper('WhisperTimed', { max_duration: 600.5 }), editor];
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Writes `jobs` (YAML lines under `jobs:`) as a manifest and loads it; against the catalogue when `online`. */
async function load(jobs: readonly string[], online = false, extra = '') {
  const file = path.join(dir, 'manifest.yaml');
  await writeFile(file, HEAD + jobs.join('\n') + '\n' + extra);
  return loadManifest(file, online ? { models } : {});
}

async function jobsOf(jobs: readonly string[], online = false, extra = ''): Promise<Record<string, ResolvedJob>> {
  return Object.fromEntries((await load(jobs, online, extra)).jobs.map((job) => [job.id, job]));
}

async function problems(jobs: readonly string[], online = false, extra = ''): Promise<string> {
  const error = await load(jobs, online, extra).then(
    () => undefined,
    (rejected: unknown) => rejected,
  );
  if (!(error instanceof ManifestError)) throw new Error(`expected a ManifestError, got ${String(error)}`);
  return error.message.replaceAll(dir, '<dir>');
}

const POSTER = '  - { id: poster, type: txt2img, prompt: a lighthouse }';

describe('which fields take another job result (jobs/inputs.ts)', () => {
  it('media fields by their media, content texts as text; never a text file path, a URL or a parameter', () => {
    expect(inputFields('txt2audio')).toEqual(['text', 'ref_audio']);
    expect(inputFields('img2img')).toEqual(['prompt', 'image', 'images']);
    expect(inputFields('transcribe')).toEqual(['source_file']);
    expect(inputFields('vid2txt')).toEqual([]);
    expect(accepts('transcribe', 'source_file')).toEqual(['audio', 'video']);
    expect(accepts('img2img', 'images.2')).toEqual(['image']);
    expect([accepts('txt2audio', 'text_file'), accepts('txt2audio', 'model'), accepts('txt2audio', 'nothing')]).toEqual([[], [], []]);
    expect(resultFits('img2video', 'first_frame_image', 'txt2img')).toBe(true);
    expect(resultFits('img2video', 'first_frame_image', 'txt2audio')).toBe(false);
    expect(resultFits('txt2audio', 'text', 'vid2txt')).toBe(true);
    expect(resultFits('txt2audio', 'text', 'txt2embedding')).toBe(false);
  });
});

describe('{ from: <id> } in a manifest', () => {
  it('is taken by such a field (each item of a list too), strictly, and nowhere else', async () => {
    const message = await problems([
      POSTER,
      '  - { id: a, type: img-upscale, image: { from: poster, to: x } }',
      '  - { id: b, type: img-upscale, image: { form: poster } }',
      '  - { id: c, type: img-upscale, image: { from: poster }, model: { from: poster } }',
      '  - { id: d, type: txt2audio, text_file: { from: poster } }',
      '  - { id: e, type: img2img, prompt: same, images: [photos/beach.png, { from: poster }, 7] }',
      '  - { id: f, type: img-upscale, image: { from: "../up" } }',
    ]);
    expect(message).toMatchInlineSnapshot(`
      "<dir>/manifest.yaml:13:40 job "a" (#2) image: expected { from: <id> } with the id of a job of this manifest, got {"from":"poster","to":"x"} ("to" besides from); write { from: <id> } and nothing else
      <dir>/manifest.yaml:14:40 job "b" (#3) image: expected { from: <id> } with the id of a job of this manifest, got {"form":"poster"} ("form" besides from); write { from: <id> } and nothing else
      <dir>/manifest.yaml:15:65 job "c" (#4) model: expected a model slug, got {"from":"poster"}
      <dir>/manifest.yaml:16:42 job "d" (#5) text_file: expected a path to a UTF-8 text file, got {"from":"poster"}
      <dir>/manifest.yaml:17:51 job "e" (#6) images: expected a list of paths, each to a JPG, PNG, GIF, BMP or WebP image, got 7
      <dir>/manifest.yaml:18:40 job "f" (#7) image: expected { from: <id> } with the id of a job of this manifest, got {"from":"../up"} (from is not an id); write { from: <id> } and nothing else
      6 problems in <dir>/manifest.yaml; nothing was sent."
    `);
  });

  it('is not read from disk: the job keeps it as an input, by the key its media would have, and where it is written', async () => {
    const jobs = await jobsOf([
      POSTER,
      '  - { id: moving, type: img2video, prompt: { from: words }, first_frame_image: { from: poster } }',
      '  - { id: words, type: img2txt, model: Nanonets_Ocr_S_F16, image: photos/beach.png }',
      '  - { id: pair, type: img2img, prompt: both, images: [photos/beach.png, { from: poster }] }',
      '  - { id: said, type: txt2audio, text: { from: words } }',
    ]);
    const { moving, pair, said } = jobs as Record<string, ResolvedJob>;
    expect(moving?.inputs).toEqual({ prompt: 'words', first_frame_image: 'poster' });
    expect(moving?.params).not.toHaveProperty('prompt');
    expect(moving?.media).toEqual({});
    expect(moving?.fieldPositions['first_frame_image']).toMatchObject({ line: 13, col: 80 });
    expect(pair?.inputs).toEqual({ 'images.1': 'poster' });
    expect(Object.keys(pair?.media ?? {})).toEqual(['images.0']);
    expect([said?.text, said?.textChars, said?.inputs, said?.priceBound]).toEqual([undefined, undefined, { text: 'words' }, true]);
    // Offline: a length has no bound to price at (nothing is priced), sides do.
    expect(jobs['poster']).not.toHaveProperty('inputs', expect.anything());
  });

  it('hashes its inputs, and only a job that has some: every other hash is as it was', async () => {
    const jobs = await jobsOf([POSTER, '  - { type: img-upscale, image: { from: poster } }', '  - { type: img-upscale, image: { from: Poster2 } }', '  - { id: Poster2, type: txt2img, prompt: b }']);
    const poster = jobs['poster'] as ResolvedJob;
    expect(poster.contentHash).toBe(contentHash({ type: 'txt2img', params: poster.params }));
    expect(contentHash({ type: 'txt2img', params: poster.params, inputs: undefined })).toBe(poster.contentHash);
    const derived = Object.values(jobs).filter((job) => job.idDerived);
    expect(derived.map((job) => job.inputs)).toEqual([{ image: 'poster' }, { image: 'Poster2' }]);
    expect(derived[0]?.contentHash).toBe(contentHash({ type: 'img-upscale', params: { model: 'RealESRGAN_x4plus' }, inputs: { image: 'poster' } }));
    expect(derived[0]?.id).toBe(`img-upscale-${derived[0]?.contentHash.slice(0, 16)}`);
    expect(derived[0]?.id).not.toBe(derived[1]?.id);
  });
});

describe('priced at the bound before its input exists', () => {
  it('an image priced by its sides at 5000 a side, a text by length at max_text, a file by length at the longest', async () => {
    const jobs = await jobsOf(
      [
        POSTER,
        '  - { id: cut, type: img-rmbg, image: { from: poster } }',
        '  - { id: moving, type: img2video, prompt: waves, first_frame_image: { from: poster } }',
        '  - { id: heard, type: vid2txt, video_url: "https://example.com/a.mp4" }',
        '  - { id: said, type: txt2audio, text: { from: heard } }',
        '  - { id: heard-again, type: transcribe, model: WhisperTimed, source_file: { from: said } }',
      ],
      true,
    );
    expect([jobs['cut']?.params, jobs['cut']?.priceBound]).toEqual([{ model: 'Ben2', width: 5000, height: 5000 }, true]);
    // Its price does not depend on the image: exact.
    expect(jobs['moving']?.priceBound).toBeUndefined();
    expect([jobs['said']?.textChars, jobs['said']?.priceBound]).toEqual([40, true]);
    expect(jobs['heard-again']?.params).toEqual({ model: 'WhisperTimed', include_ts: false, duration_seconds: 601 });
  });

  it('refuses, located, a field whose result prices the job when the catalogue states no bound', async () => {
    const message = await problems(
      [
        '  - { id: heard, type: vid2txt, video_url: "https://example.com/a.mp4" }',
        '  - { id: said, type: txt2audio, model: Chatterbox, lang: en, voice: default, text: { from: heard } }',
        '  - { id: heard-again, type: transcribe, source_file: { from: said } }',
      ],
      true,
    );
    expect(message).toMatchInlineSnapshot(`
      "<dir>/manifest.yaml:13:85 job "said" (#2) text: expected a text of its own (txt2audio is priced by its length, and Chatterbox states no max_text), got the result of "heard"; give the text itself, or a model that states max_text
      <dir>/manifest.yaml:14:55 job "heard-again" (#3) source_file: expected a file of its own (transcribe is priced by its length, and WhisperLargeV3 states no longest), got the result of "said"; give the file itself, or a model that states its longest duration
      2 problems in <dir>/manifest.yaml; nothing was sent."
    `);
  });
});

describe('checks against the catalogue count what a job takes from others', () => {
  it('a last frame and the images of an edit, given or taken', async () => {
    const message = await problems(
      [
        POSTER,
        '  - id: moving',
        '    type: img2video',
        '    model: Ltxv_13B_0_9_8_Distilled_FP8',
        '    steps: 1',
        '    fps: 30',
        '    prompt: waves',
        '    first_frame_image: { from: poster }',
        '    last_frame_image: { from: poster }',
        '  - { id: four, type: img2img, prompt: p, images: [photos/beach.png, { from: poster }, photos/fog.jpeg, { from: poster }] }',
      ],
      true,
    );
    expect(message).toMatchInlineSnapshot(`
      "<dir>/manifest.yaml:20:23 job "moving" (#2) last_frame_image: expected no last frame for Ltxv_13B_0_9_8_Distilled_FP8 (it does not support one), got {"from":"poster"}; remove it, or use a model that supports it: Ltx2_3_22B_Dist_INT8
      <dir>/manifest.yaml:21:51 job "four" (#3) images: expected at most 3 images for QwenImageEdit_Plus_NF4, got 4 images
      2 problems in <dir>/manifest.yaml; nothing was sent."
    `);
  });
});

describe('the graph, checked before anything is sent', () => {
  it('reports a missing id, a result the field does not take, a split parent and cycles, each at its field', async () => {
    const message = await problems(
      [
        POSTER,
        '  - { id: up, type: img-upscale, image: { from: pster } }',
        '  - { id: said, type: txt2audio, text: { from: poster } }',
        '  - { id: pair, type: img2img, prompt: both, images: [photos/beach.png, { from: said }] }',
        '  - { id: a, type: img-upscale, image: { from: b } }',
        '  - { id: b, type: img-upscale, image: { from: A } }',
        '  - { id: c, type: img-upscale, image: { from: c } }',
        '  - { id: long, type: txt2audio, split: sentences, text: "One two three four five six. Seven eight nine ten eleven." }',
        '  - { id: clip, type: transcribe, model: WhisperTimed, source_file: { from: long } }',
      ],
      true,
    );
    expect(message).toMatchInlineSnapshot(`
      "<dir>/manifest.yaml:13:41 job "up" (#2) image: expected the id of a job of this manifest, got "pster" (no job has this id); give the id of the job whose result it takes
      <dir>/manifest.yaml:14:40 job "said" (#3) text: expected the id of a job that makes text, got "poster" (txt2img, which makes an image); refer to a job that makes text, or give text a value of its own
      <dir>/manifest.yaml:15:54 job "pair" (#4) images.1: expected the id of a job that makes an image, got "said" (txt2audio, which makes audio); refer to a job that makes an image, or give images a value of its own
      <dir>/manifest.yaml:17:40 job "b" (#6) image: expected references that do not lead back to this job, got a cycle: b → a → b; one of these jobs must take this field from a file or a text of its own
      <dir>/manifest.yaml:18:40 job "c" (#7) image: expected references that do not lead back to this job, got a cycle: c → c; one of these jobs must take this field from a file or a text of its own
      <dir>/manifest.yaml:20:69 job "clip" (#9) source_file: expected the id of a job that is not split into parts, got "long" (split into parts); refer to one of its parts ("long.p001" …), or do not split it
      6 problems in <dir>/manifest.yaml; nothing was sent."
    `);
  });

  it('checks a stream of references, locating only those with a problem; one marked acyclic is not walked', async () => {
    const ref = (jobId: string, fromId: string): InputRef => ({ jobId, jobType: 'img-upscale', field: 'image', fromId, fromType: 'img-upscale', fromSplit: false });
    async function* refs() {
      yield ref('c', 'b');
      yield ref('b', 'a');
      yield ref('d', 'a');
      yield ref('e', 'C');
    }
    const places: string[] = [];
    const graph = await checkGraph(refs(), (at) => {
      places.push(at.jobId);
      return { file: 'jobs.db', line: 1, col: 1 };
    });
    expect(graph.issues).toEqual([]);
    expect(places).toEqual([]);
    const cycle = await checkGraph([ref('x', 'y'), ref('y', 'x'), ref('z', 'x')], async (at) => ({ file: 'jobs.db', line: at.jobId.length, col: 9 }));
    expect(cycle.issues).toMatchInlineSnapshot(`
      [
        {
          "col": 9,
          "expected": "references that do not lead back to this job",
          "field": "image",
          "file": "jobs.db",
          "got": "a cycle: y → x → y",
          "hint": "one of these jobs must take this field from a file or a text of its own",
          "jobId": "y",
          "line": 1,
          "message": "expected references that do not lead back to this job, got a cycle: y → x → y",
        },
      ]
    `);
    // The ledger marks every reference of a job with a step acyclic: a loop only the unmarked close is still found.
    const marked = (jobId: string, fromId: string): InputRef => ({ ...ref(jobId, fromId), acyclic: true });
    const mixed = await checkGraph([marked('z', 'x'), ref('x', 'y'), ref('y', 'x')], () => ({ file: 'jobs.db', line: 1, col: 9 }));
    expect(mixed.issues.map((issue) => issue.got)).toEqual(['a cycle: y → x → y']);
    // A marked reference is still checked on its own: a missing id is reported.
    const missing = await checkGraph([{ ...marked('z', 'nobody'), fromType: undefined }], () => ({ file: 'jobs.db', line: 1, col: 9 }));
    expect(missing.issues.map((issue) => issue.got)).toEqual(['"nobody" (no job has this id)']);
  });
});

describe('{ from } templates in sources', () => {
  it('a files entry fans out: each file a job, and each of its dependents named from the same file', async () => {
    const sources = `sources:
  - { files: "photos/*", type: img-rmbg, field: image, id: "cut-{stem}" }
  - { files: "photos/*", type: img-upscale, field: image, id: "up-{stem}", image: { from: "cut-{stem}" } }
  - { matrix: { images: [[{ from: "cut-{n}" }]] }, type: img2img, prompt: p, id: "m-{n}" }
`;
    const jobs = await jobsOf(['  - { id: cut-1, type: img-rmbg, image: photos/fog.jpeg }'], false, sources);
    expect(Object.fromEntries(Object.entries(jobs).map(([id, job]) => [id, job.inputs ?? job.media['image']?.written]))).toEqual({
      'cut-1': 'photos/fog.jpeg',
      'cut-beach': 'photos/beach.png',
      'cut-fog': 'photos/fog.jpeg',
      'up-beach': { image: 'cut-beach' },
      'up-fog': { image: 'cut-fog' },
      'm-1': { 'images.0': 'cut-1' },
    });
  });

  it('a JSON Lines row and a CSV entry fill theirs from the row; a template that makes no id is located', async () => {
    await writeFile(path.join(dir, 'rows.jsonl'), '{"id": "j1", "image": {"from": "cut-{id}"}}\n{"id": "j2", "image": {"from": "cut-{nope}"}}\n');
    await writeFile(path.join(dir, 'rows.csv'), 'id\nc1\n');
    const sources = `sources:
  - { jsonl: rows.jsonl, type: img-upscale }
  - { csv: rows.csv, type: img-upscale, image: { from: "cut-{id}" } }
  - { csv: rows.csv, type: img-upscale, id: "x-{id}", image: { from: "cut-{id" } }
`;
    expect(await problems(['  - { id: cut-j1, type: img-rmbg, image: photos/fog.jpeg }'], false, sources)).toMatchInlineSnapshot(`
      "<dir>/manifest.yaml:15:48 job "c1" image: expected the id of a job of this manifest, got "cut-c1" (no job has this id); give the id of the job whose result it takes
      <dir>/manifest.yaml:16:62 image: expected an id template with placeholders like {stem} (letters, digits and _ inside braces), got "cut-{id"; every { needs its }
      <dir>/rows.jsonl:2:23 image: expected a value for {nope} (id template "cut-{nope}"), got nothing; give this row nope
      3 problems in <dir>/manifest.yaml, <dir>/rows.jsonl; nothing was sent."
    `);
  });
});
