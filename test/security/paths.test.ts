import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/manifest/errors.js';
import { loadManifest } from '../support/load-manifest.js';
import type { FollowedJob } from '../../src/runner/follow.js';
import { outputPathFor } from '../../src/runner/download.js';
import { hasStackTrace, tempDir } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';

const HEAD = [
  'version: 1',
  'defaults:',
  '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
  'jobs:',
];

/** Ids as YAML double-quoted scalars (so NUL and the like can be written with escapes). */
const BAD_IDS: Record<string, string> = {
  'parent dir': '"../x"',
  'nested parent': '"a/../../x"',
  'slash': '"a/b"',
  'backslash': '"a\\\\b"',
  'dot dot': '".."',
  'dot': '"."',
  'absolute': '"/etc/passwd"',
  'windows absolute': '"C:\\\\x"',
  'NUL': '"a\\0b"',
  'newline': '"a\\nb"',
  'too long (129)': `"${'a'.repeat(129)}"`,
  'very long (100,000)': `"${'b'.repeat(100_000)}"`,
  'empty': '""',
  'tilde': '"~"',
  'number': '12',
  'url-encoded slash': '"a%2Fb"',
};

describe('ids cannot leave the output folder', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-paths-'));
  });
  afterAll(async () => cleanup());

  async function manifestWith(ids: string[], name: string): Promise<string> {
    const jobs = ids.map((id, i) => `  - { id: ${id}, type: txt2audio, text: "line ${i}" }`);
    const file = path.join(dir, name);
    await writeFile(file, [...HEAD, ...jobs, ''].join('\n'));
    return file;
  }

  it.each(Object.entries(BAD_IDS))('refuses the id: %s', async (_label, id) => {
    const file = await manifestWith([id], 'one.yaml');
    const error = await loadManifest(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ManifestError);
    const issues = (error as ManifestError).issues;
    expect((error as ManifestError).exitCode).toBe(2);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ line: 5, field: 'id' });
    // The message stays readable however long the id.
    expect((error as ManifestError).message.length).toBeLessThan(600);
  });

  it('validate --offline refuses them all at once, exit 2, each located, no stack trace', async () => {
    const ids = Object.values(BAD_IDS);
    const file = await manifestWith(ids, 'all.yaml');
    // The CLI's main in this process (bad-input.test.ts shows a refusal's exit 2 through a process).
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(hasStackTrace(result.stderr)).toBe(false);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(ids.length + 1);
    ids.forEach((_id, i) => expect(lines[i]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${5 + i}:\\d+ job .*id: expected an id`)));
    expect(lines.at(-1)).toMatch(/problems in .*; nothing was sent\./);
  });
});

describe('outputPathFor', () => {
  const job = (id: string, format: 'mp3' | 'wav' = 'mp3'): FollowedJob => ({
    id,
    type: 'txt2audio',
    params: { model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format, sample_rate: 24000 },
  });
  const out = path.resolve('/tmp/mb-out');

  it('puts a valid id directly in the folder, with a known extension from the URL or the format', () => {
    expect(outputPathFor(out, job('intro-en'), 'https://cdn.example/r/abc.wav?sig=1')).toBe(path.join(out, 'intro-en.wav'));
    expect(outputPathFor(out, job('a.b_c-d'), 'https://cdn.example/r/abc')).toBe(path.join(out, 'a.b_c-d.mp3'));
    expect(outputPathFor('relative/out', job('x'), 'https://h/x.flac')).toBe(path.resolve('relative/out', 'x.flac'));
    // A video's extension in the URL does not name a speech result; its bytes would (mime).
    expect(outputPathFor(out, job('y'), 'https://h/y.mp4')).toBe(path.join(out, 'y.mp3'));
    expect(outputPathFor(out, job('z'), 'https://h/z.mp3', 'audio/wav')).toBe(path.join(out, 'z.wav'));
  });

  it('never takes a path or an unknown extension from the URL', () => {
    for (const url of [
      'https://h/a/..%2F..%2Fevil.sh',
      'https://h/x.wav%2F..%2F..%2Fevil',
      'https://h/x.exe',
      'https://h/x.wav/../../../etc/cron.d/x',
      'not a url at all',
      'file:///etc/passwd',
    ]) {
      const target = outputPathFor(out, job('safe'), url);
      expect(path.dirname(target)).toBe(out);
      expect(path.basename(target)).toMatch(/^safe\.(mp3|wav|flac|ogg|opus|aac|m4a|mp4|webm|mov|gif)$/);
    }
  });

  it('throws for an id that would land outside the folder, should one ever get past the manifest', () => {
    for (const id of ['../x', 'a/b', '../../etc/passwd', '/etc/passwd', `..${path.sep}x`]) {
      expect(() => outputPathFor(out, job(id), 'https://h/x.wav')).toThrow(/would be written outside/);
    }
  });
});
