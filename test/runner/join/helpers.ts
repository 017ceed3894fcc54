import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const folders: string[] = [];

export async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mediabatch-join-'));
  folders.push(dir);
  return dir;
}

export async function removeFolders(): Promise<void> {
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/** Writes each buffer as `<name>` in `dir`; the paths, in order. */
export async function writeParts(dir: string, parts: Record<string, Buffer>): Promise<string[]> {
  const paths: string[] = [];
  for (const [name, bytes] of Object.entries(parts)) {
    const path = join(dir, name);
    await writeFile(path, bytes);
    paths.push(path);
  }
  return paths;
}

/** A RIFF chunk: id, little-endian size, payload, a pad byte when the payload is odd. */
export function chunk(id: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'latin1');
  head.writeUInt32LE(payload.length, 4);
  return Buffer.concat([head, payload, Buffer.alloc(payload.length % 2)]);
}

export function fmtPayload(sampleRate: number, channels: number, bits: number, tag = 1): Buffer {
  const fmt = Buffer.alloc(16);
  const blockAlign = (channels * bits) / 8;
  fmt.writeUInt16LE(tag, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(sampleRate, 4);
  fmt.writeUInt32LE(sampleRate * blockAlign, 8);
  fmt.writeUInt16LE(blockAlign, 12);
  fmt.writeUInt16LE(bits, 14);
  return fmt;
}

/** A WAV file from its chunks, in the order given. */
export function riff(chunks: readonly Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), ...chunks]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}
