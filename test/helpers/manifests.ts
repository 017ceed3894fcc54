import { writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface TtsManifestOptions {
  jobs: number;
  budget?: number;
  /** Words per text; texts differ per job so every job is a distinct request. */
  words?: number;
  ids?: boolean;
}

/** Writes a text-to-speech manifest of `jobs` distinct jobs (Kokoro, as the simulator knows it). */
export async function writeTtsManifest(dir: string, options: TtsManifestOptions, name = 'batch.yaml'): Promise<string> {
  const lines = [
    'version: 1',
    ...(options.budget === undefined ? [] : [`budget: ${options.budget}`]),
    'defaults:',
    '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
    'jobs:',
  ];
  for (let i = 0; i < options.jobs; i += 1) {
    const words = Array.from({ length: (options.words ?? 6) + (i % 7) }, (_, w) => `word${(i * 31 + w) % 997}`).join(' ');
    if (options.ids === false) lines.push(`  - type: txt2audio`, `    text: "Line ${i}: ${words}."`);
    else lines.push(`  - id: line-${String(i).padStart(5, '0')}`, `    type: txt2audio`, `    text: "Line ${i}: ${words}."`);
  }
  const file = path.join(dir, name);
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

/** A CSV source `lines.csv` of speech jobs whose ids are row numbers (`row-{n}`): ids that shift when a row is inserted. */
export const ROW_NUMBERED_MANIFEST = [
  'version: 1',
  'defaults:',
  '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }',
  'sources:',
  '  - csv: lines.csv',
  '    type: txt2audio',
  '    id: "row-{n}"',
  '',
].join('\n');
