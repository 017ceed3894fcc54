import { truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';

const HEAD = [
  'version: 1',
  'defaults:',
  '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
  'jobs:',
];

/**
 * Each cap is checked by `validate` before anything is sent: through the CLI's entry point in this
 * process (test/security/bad-input.test.ts shows a refused manifest's exit through a process).
 */
describe('size caps: what a manifest can make the process hold', () => {
  const ws = useWorkspace();

  it('a manifest over 32 MB is refused by its size, unread: exit 2, the size and the cap, what to do', async () => {
    const file = path.join(ws.dir, 'huge.yaml');
    await writeFile(file, '');
    // Sparse: 8 GiB of nothing on disk. Reading it would take minutes (or fail): only a check of
    // its size before reading answers at once.
    await truncate(file, 8 * 1024 ** 3);
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(hasStackTrace(result.stderr)).toBe(false);
    expect(result.stderr).toBe(
      `${file}:1:1 expected a manifest of at most 32 MB, got 8192.0 MB; split it into several manifests\n1 problem in ${file}; nothing was sent.\n`,
    );
  });

  it('a manifest just over the cap says by how much', async () => {
    const file = path.join(ws.dir, 'over.yaml');
    await writeFile(file, '');
    await truncate(file, 32 * 1024 * 1024 + 1);
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}:1:1 expected a manifest of at most 32 MB, got 33554433 bytes; split it into several manifests`);
  });

  it('an inline text over 1 MB is refused like a text file, located at the job and its text', async () => {
    const file = path.join(ws.dir, 'long-text.yaml');
    const text = 'a'.repeat(1024 * 1024 + 1);
    await writeFile(file, [...HEAD, '  - id: short', '    type: txt2audio', '    text: "fine"', '  - id: long', '    type: txt2audio', `    text: ${text}`, ''].join('\n'));
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(hasStackTrace(result.stderr)).toBe(false);
    expect(result.stderr).toBe(
      `${file}:10:11 job "long" (#2) text: expected a text of at most 1 MB, got "${'a'.repeat(58)}… (1048577 bytes); split it into several jobs\n` +
        `1 problem in ${file}; nothing was sent.\n`,
    );
  });

  it('an inline text of exactly 1 MB is fine', async () => {
    const file = path.join(ws.dir, 'at-cap.yaml');
    await writeFile(file, [...HEAD, '  - id: at-cap', '    type: txt2audio', `    text: ${'é'.repeat(512 * 1024)}`, ''].join('\n'));
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('a line over 2 MB (a 20 MB quoted text) is refused at its line before the YAML is parsed', async () => {
    const file = path.join(ws.dir, 'huge-text.yaml');
    await writeFile(file, [...HEAD, '  - id: huge', '    type: txt2audio', `    text: "${'word '.repeat(4 * 1024 * 1024)}"`, ''].join('\n'));
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `${file}:7:1 expected lines of at most 2 MB, got one of 20.0 MB; a job's text is at most 1 MB; split a longer one into several jobs\n1 problem in ${file}; nothing was sent.\n`,
    );
  });

  it('a block text over 2 MB (`text: |` and 20 MB of short lines) is refused at its first line before the YAML is parsed', async () => {
    const file = path.join(ws.dir, 'huge-block.yaml');
    const lines = Array.from({ length: 256 * 1024 }, () => `      ${'word '.repeat(16)}`);
    await writeFile(file, [...HEAD, '  - id: huge', '    type: txt2audio', '    text: |-  # the book', ...lines, '  - id: after', '    type: txt2audio', '    text: hi', ''].join('\n'));
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `${file}:7:1 expected texts of at most 2 MB, got a block text longer than that; a job's text is at most 1 MB; split a longer one into several jobs\n1 problem in ${file}; nothing was sent.\n`,
    );
  });

  it('block texts that fit, however many, are read as usual', async () => {
    const file = path.join(ws.dir, 'many-blocks.yaml');
    const job = (n: number) => [`  - id: b${n}`, '    type: txt2audio', '    text: >', ...Array.from({ length: 64 }, () => `      ${'word '.repeat(16)}`)];
    await writeFile(file, [...HEAD, ...Array.from({ length: 40 }, (_, n) => job(n)).flat(), ''].join('\n'));
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
