import { copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../support/load-manifest.js';
import { hasStackTrace, ROOT } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';

const HEAD = [
  'version: 1',
  'defaults:',
  '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
  '  img2video: { model: Ltx2_3_22B_Dist_INT8, width: 768, height: 432, steps: 8, frames: 97, fps: 24, guidance: 1, seed: 1 }',
  'jobs:',
];
const HINT = 'copy the file into that folder, or pass --allow-outside-files if you trust this manifest';

/**
 * <dir>/outside/   a secret text and a picture that are not the manifest's to send
 * <dir>/project/   the manifest, its own script and picture, links pointing in and out
 * <dir>/alias      a link to project/: the manifest's folder reached through a symlink
 */
async function layout(dir: string): Promise<{ project: string; outside: string }> {
  const project = path.join(dir, 'project');
  const outside = path.join(dir, 'outside');
  await mkdir(path.join(project, 'scripts'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'root:x:0:0:not for the service\n');
  await copyFile(path.join(ROOT, 'manifests/images/beach.png'), path.join(outside, 'pic.png'));
  await copyFile(path.join(ROOT, 'manifests/images/beach.png'), path.join(project, 'pic.png'));
  await writeFile(path.join(project, 'scripts', 'ok.txt'), 'A line of our own.\n');
  await symlink(path.join(outside, 'secret.txt'), path.join(project, 'link-out.txt'));
  await symlink(path.join(outside, 'pic.png'), path.join(project, 'link-out.png'));
  await symlink(outside, path.join(project, 'linked-dir'));
  await symlink('scripts/ok.txt', path.join(project, 'link-in.txt'));
  await symlink(project, path.join(dir, 'alias'));
  return { project, outside };
}

async function manifest(folder: string, jobs: string[]): Promise<string> {
  const file = path.join(folder, 'm.yaml');
  await writeFile(file, [...HEAD, ...jobs, ''].join('\n'));
  return file;
}

describe('files named by a manifest stay inside its folder', () => {
  const ws = useWorkspace();

  it('refuses ../, an absolute path, a link and a linked folder pointing outside: exit 2, each located, saying how to allow it', async () => {
    const { project, outside } = await layout(ws.dir);
    const secret = path.join(outside, 'secret.txt');
    const pic = path.join(outside, 'pic.png');
    const file = await manifest(project, [
      '  - { id: parent, type: txt2audio, text_file: ../outside/secret.txt }',
      `  - { id: absolute, type: txt2audio, text_file: ${secret} }`,
      '  - { id: link, type: txt2audio, text_file: link-out.txt }',
      '  - { id: linked-dir, type: txt2audio, text_file: linked-dir/secret.txt }',
      `  - { id: frames, type: img2video, prompt: waves, first_frame_image: link-out.png, last_frame_image: ${pic} }`,
      '  - { id: fine, type: txt2audio, text_file: scripts/ok.txt }',
    ]);
    // The refusal is decided from the manifest, before anything is sent: the CLI's main in this process.
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(hasStackTrace(result.stderr)).toBe(false);
    const refused = (line: number, col: number, job: string, field: string, written: string, real: string) =>
      `${file}:${line}:${col} job "${job}" (#${line - 5}) ${field}: expected a file inside the manifest's folder, got "${written}" (resolves to ${real}); ${HINT}`;
    expect(result.stderr.split('\n')).toEqual([
      refused(6, 47, 'parent', 'text_file', '../outside/secret.txt', secret),
      refused(7, 49, 'absolute', 'text_file', secret, secret),
      refused(8, 45, 'link', 'text_file', 'link-out.txt', secret),
      refused(9, 51, 'linked-dir', 'text_file', 'linked-dir/secret.txt', secret),
      refused(10, 70, 'frames', 'first_frame_image', 'link-out.png', pic),
      refused(10, 102, 'frames', 'last_frame_image', pic, pic),
      `6 problems in ${file}; nothing was sent.`,
      '',
    ]);
  });

  it('takes every one of them with --allow-outside-files (validate, estimate and run share the flag)', async () => {
    const { project, outside } = await layout(ws.dir);
    const file = await manifest(project, [
      '  - { id: parent, type: txt2audio, text_file: ../outside/secret.txt }',
      `  - { id: absolute, type: txt2audio, text_file: ${path.join(outside, 'secret.txt')} }`,
      '  - { id: link, type: txt2audio, text_file: link-out.txt }',
      `  - { id: frames, type: img2video, prompt: waves, first_frame_image: link-out.png, last_frame_image: ${path.join(outside, 'pic.png')} }`,
    ]);
    // The CLI's main in this process: what the flag changes is what the commands read and send.
    const validate = await mainInProcess(['validate', file, '--offline', '--allow-outside-files']);
    expect(validate.stderr).toBe('');
    expect(validate.code).toBe(0);
    const sim = await ws.startSim();
    const service = ['--base-url', sim.url, '--plan', 'unlimited'];
    const env = { MEDIABATCH_TOKEN: sim.token };
    const estimate = await mainInProcess(['estimate', file, ...service, '--allow-outside-files'], env);
    expect(estimate.code, estimate.stderr).toBe(0);
    const refusedRun = await mainInProcess(['run', file, ...service, '--no-wait'], env);
    expect(refusedRun.code).toBe(2);
    expect(refusedRun.stderr).toContain(HINT);
    expect(sim.stats.accepted).toEqual([]);
    const run = await mainInProcess(['run', file, ...service, '--no-wait', '--allow-outside-files'], env);
    expect(run.stderr).toMatch(/0\/4 done · 4 running/);
    expect(sim.stats.accepted).toHaveLength(4);

    const loaded = await loadManifest(file, { allowOutsideFiles: true });
    const [parent, , , frames] = loaded.jobs;
    expect(parent?.text).toBe('root:x:0:0:not for the service\n');
    expect(frames?.media['first_frame_image']?.path).toBe(path.join(outside, 'pic.png'));
  });

  it('takes links and absolute paths that stay inside, also when the folder itself is reached through a link', async () => {
    const { project } = await layout(ws.dir);
    const jobs = [
      '  - { id: link-in, type: txt2audio, text_file: link-in.txt }',
      `  - { id: absolute-in, type: txt2audio, text_file: ${path.join(project, 'scripts/ok.txt')} }`,
      '  - { id: dotted, type: txt2audio, text_file: scripts/../scripts/ok.txt }',
      `  - { id: frame, type: img2video, prompt: waves, first_frame_image: ${path.join(ws.dir, 'alias', 'pic.png')} }`,
    ];
    await manifest(project, jobs);
    for (const file of [path.join(project, 'm.yaml'), path.join(ws.dir, 'alias', 'm.yaml')]) {
      const loaded = await loadManifest(file);
      expect(loaded.jobs.map((job) => job.text ?? job.media['first_frame_image']?.path)).toEqual([
        'A line of our own.\n',
        'A line of our own.\n',
        'A line of our own.\n',
        path.join(project, 'pic.png'),
      ]);
    }
  });
});
