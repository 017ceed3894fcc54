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

  it('never replaces a file already there; one with the very bytes of the result is taken as the result', async () => {
    const target = path.join(workspace.dir, 'a.wav');
    await writeFile(target, 'a person\'s own file');
    const beside = await placeResult(await part('new result'), target, sha256('new result'), { generatedAgain: false });
    expect(beside).toBe(path.join(workspace.dir, 'a~2.wav'));
    expect(readFileSync(target, 'utf8')).toBe("a person's own file");
    expect(readFileSync(beside, 'utf8')).toBe('new result');
    // A crash after the move, before the ledger heard of it: the same bytes are found, not copied again.
    expect(await placeResult(await part('new result'), target, sha256('new result'), { generatedAgain: false })).toBe(beside);
    expect(existsSync(path.join(workspace.dir, 'a~3.wav'))).toBe(false);
    expect(existsSync(`${target}.part`)).toBe(false);
  });

  it('a job generated again keeps its earlier result, even with the same bytes, and takes the first free name', async () => {
    const target = path.join(workspace.dir, 'a.wav');
    await writeFile(target, 'same bytes');
    await writeFile(path.join(workspace.dir, 'a~2.wav'), 'an older result');
    const placed = await placeResult(await part('same bytes'), target, sha256('same bytes'), { generatedAgain: true });
    expect(placed).toBe(path.join(workspace.dir, 'a~3.wav'));
    expect(readFileSync(target, 'utf8')).toBe('same bytes');
    expect(readFileSync(path.join(workspace.dir, 'a~2.wav'), 'utf8')).toBe('an older result');
    expect(readFileSync(placed, 'utf8')).toBe('same bytes');
    expect(existsSync(`${target}.part`)).toBe(false);
  });

  it('skips a folder in the way', async () => {
    const target = path.join(workspace.dir, 'a.wav');
    await mkdir(target);
    const placed = await placeResult(await part('new result'), target, sha256('new result'), { generatedAgain: false });
    expect(placed).toBe(path.join(workspace.dir, 'a~2.wav'));
    expect(existsSync(`${target}.part`)).toBe(false);
  });
});
