import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { placeResult } from '../../src/runner/place-result.js';
import { useWorkspace } from '../helpers/workspace.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('placeResult', () => {
  const workspace = useWorkspace();

  async function part(text: string): Promise<string> {
    const file = path.join(workspace.dir, 'a.wav.part');
    await writeFile(file, text);
    return file;
  }

  it("replaces only the file the ledger records as this job's earlier result", async () => {
    const target = path.join(workspace.dir, 'a.wav');
    await writeFile(target, 'earlier result');
    const placed = await placeResult(await part('new result'), target, sha256('new result'), { path: target, sha256: sha256('earlier result') });
    expect(placed).toBe(target);
    expect(readFileSync(target, 'utf8')).toBe('new result');
    expect(existsSync(`${target}.part`)).toBe(false);
  });

  it('keeps a file at the recorded path whose bytes are no longer the recorded ones', async () => {
    const target = path.join(workspace.dir, 'a.wav');
    await writeFile(target, 'edited by hand since');
    const placed = await placeResult(await part('new result'), target, sha256('new result'), { path: target, sha256: sha256('earlier result') });
    expect(placed).toBe(path.join(workspace.dir, 'a~2.wav'));
    expect(readFileSync(target, 'utf8')).toBe('edited by hand since');
    expect(readFileSync(placed, 'utf8')).toBe('new result');
  });

  it('skips a folder in the way', async () => {
    const target = path.join(workspace.dir, 'a.wav');
    await mkdir(target);
    const placed = await placeResult(await part('new result'), target, sha256('new result'), { path: null, sha256: null });
    expect(placed).toBe(path.join(workspace.dir, 'a~2.wav'));
    expect(existsSync(`${target}.part`)).toBe(false);
  });
});
