import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openManifest } from '../src/manifest/open.js';
import { checkJobs } from '../src/manifest/read.js';

type WriteFile = (path: string, text: string) => Promise<void>;

/**
 * Writes a manifest of `jobCount` jobs into `dir`: mostly speech with inline text, some speech
 * from one shared text file, a fifth videos sharing two images (so caching matters). Returns its path.
 */
export async function writeLargeManifest(dir: string, jobCount: number, writeFile: WriteFile, imageSource = 'manifests/images'): Promise<string> {
  await mkdir(join(dir, 'images'), { recursive: true });
  await copyFile(join(imageSource, 'beach.png'), join(dir, 'images/beach.png'));
  await copyFile(join(imageSource, 'beach-dusk.png'), join(dir, 'images/dusk.png'));
  await writeFile(join(dir, 'shared.txt'), 'A chapter read from a file.\n');
  const lines = [
    'version: 1',
    'budget: 1000',
    'defaults:',
    '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
    '  img2video: { model: Ltx2_3_22B_Dist_INT8, width: 768, height: 432, steps: 8, frames: 97, fps: 24, guidance: 1, seed: 1 }',
    'jobs:',
  ];
  for (let i = 0; i < jobCount; i++) {
    if (i % 5 === 4) {
      lines.push(`  - { type: img2video, prompt: "scene ${i}", first_frame_image: images/beach.png, last_frame_image: images/dusk.png, seed: ${i} }`);
    } else if (i % 50 === 0) {
      lines.push(`  - { id: chapter-${i}, type: txt2audio, text_file: shared.txt, voice: bf_emma, lang: en-gb }`);
    } else {
      lines.push(`  - type: txt2audio\n    text: "Line number ${i} of the generated manifest, long enough to look real."`);
    }
  }
  const path = join(dir, 'large.yaml');
  await writeFile(path, `${lines.join('\n')}\n`);
  return path;
}

/** Loads a generated 10,000-job manifest (offline checks only) a few times; prints and returns the timings. */
export async function benchManifest(
  jobCount = 10_000,
  runs = 5,
  imageSource = 'manifests/images',
): Promise<{ jobs: number; firstMs: number; medianMs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'mediabatch-bench-'));
  try {
    const path = await writeLargeManifest(dir, jobCount, writeFile, imageSource);
    const timesMs: number[] = [];
    for (let run = 0; run < runs; run++) {
      const start = performance.now();
      const jobs: unknown[] = [];
      await checkJobs(await openManifest(path), undefined, (job) => jobs.push(job));
      timesMs.push(performance.now() - start);
      if (jobs.length !== jobCount) throw new Error(`expected ${jobCount} jobs, got ${jobs.length}`);
    }
    const sorted = [...timesMs].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    console.log(`loadManifest, ${jobCount} jobs offline: first ${timesMs[0]?.toFixed(0)} ms, median ${median.toFixed(0)} ms over ${runs} runs`);
    return { jobs: jobCount, firstMs: timesMs[0] ?? 0, medianMs: median };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('manifest-bench.js')) await benchManifest();
