import { open } from 'node:fs/promises';

/** The speech jobs both the runner and the bare loop send: three voices, all-different texts. */
export const VOICES = ['af_sky', 'af_bella', 'am_adam'] as const;

export function benchText(i: number): string {
  return `Sentence number ${i} ${'la '.repeat(i % 50)}end.`;
}

/** Writes a large data file a megabyte at a time: the header, then line `i` for each i from `from` through `to`. */
export async function writeLines(file: string, header: string, range: { from: number; to: number }, line: (i: number) => string): Promise<void> {
  const handle = await open(file, 'w');
  try {
    let chunk = header;
    for (let i = range.from; i <= range.to; i += 1) {
      chunk += line(i);
      if (chunk.length > 1 << 20) {
        await handle.write(chunk);
        chunk = '';
      }
    }
    await handle.write(chunk);
  } finally {
    await handle.close();
  }
}
