import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hasStackTrace, runCli, tempDir } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { startSecondServer, type SecondServer } from './second-server.js';
import { catalogueTypesOf, JOB_TYPES } from '../../src/jobs/index.js';

interface ModelJson {
  slug: string;
  inference_types: string[];
  languages: { slug: string; voices: { slug: string }[] }[];
}

describe('mediabatch models', () => {
  let server: SecondServer | undefined;
  let cleanup: (() => Promise<void>) | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
    await cleanup?.();
    cleanup = undefined;
  });

  // The one spawn: what the built program prints and the code it exits with.
  it('--sim lists the models with their voices', async () => {
    const result = await runCli(['models', '--sim']);
    expect(result.code).toBe(0);
    expect(hasStackTrace(result.stderr)).toBe(false);
    expect(result.stdout).toMatch(/^Kokoro {2}\(txt2audio\)/m);
    expect(result.stdout).toMatch(/en-us \(English \(US\)\): af_sky, af_bella, am_adam/);
    expect(result.stdout).toMatch(/^Ltxv_13B_0_9_8_Distilled_FP8 {2}\(img2video, txt2video\)/m);
  });

  it('lists every model of a second implementation of the API, past the first page of 25 and past 50', async () => {
    server = await startSecondServer();
    const expected = server.models.filter((m) => m.types.includes('txt2audio') || m.types.includes('img2video'));
    expect(expected).toHaveLength(60);
    const env = { MEDIABATCH_TOKEN: server.token };

    const text = await mainInProcess(['models', '--base-url', server.url], env);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    for (const model of expected) expect(text.stdout).toContain(`${model.slug}  (`);
    expect(text.stdout).not.toContain('Second_Edit_');
    expect(text.stdout).toContain('v058_alpha, v058_beta');
    expect(text.stdout).toMatch(/\n60 model\(s\)\.\n?$/);

    const json = await mainInProcess(['models', '--base-url', server.url, '--json'], env);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as { models: ModelJson[] };
    expect(doc.models.map((m) => m.slug).sort()).toEqual(expected.map((m) => m.slug).sort());
    // inference_types served as an object and info served as [] both come through.
    const objectTyped = expected.find((m) => m.typesAsObject)!;
    expect(doc.models.find((m) => m.slug === objectTyped.slug)?.inference_types).toEqual(objectTyped.types);
    const last = doc.models.find((m) => m.slug === 'Second_Tts_058')!;
    expect(last.languages[0]?.voices.map((v) => v.slug)).toEqual(['v058_alpha', 'v058_beta']);

    // What went over the wire: the documented query, every page walked, the token in the header only.
    const pages = server.requests.filter((r) => r.path === '/api/v1/client/models');
    for (const request of pages) {
      expect(request.authorization).toBe(`Bearer ${server.token}`);
      // Each kind by its name in the catalogue (aud2video as audio2video; vid-rmbg has none).
      expect(request.query['filter[inference_types]']).toBe(catalogueTypesOf(JOB_TYPES).join(','));
    }

    const videoOnly = await mainInProcess(['models', '--base-url', server.url, '--type', 'img2video', '--json'], env);
    expect(videoOnly.code).toBe(0);
    const videos = (JSON.parse(videoOnly.stdout) as { models: ModelJson[] }).models;
    expect(videos).toHaveLength(30);
    expect(videos.every((m) => m.inference_types.includes('img2video'))).toBe(true);
  });

  it('a wrong token gives one line, exit 4, no stack trace, and never shows the token', async () => {
    server = await startSecondServer();
    const wrong = 'wrong-token-d41d8cd98f00b204';
    for (const args of [['models'], ['models', '--json']]) {
      const result = await mainInProcess([...args, '--base-url', server.url], { MEDIABATCH_TOKEN: wrong });
      expect(result.code).toBe(4);
      // Under --json the same failure is also one document on stdout.
      if (args.includes('--json')) expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: 'E_API_AUTH', exit_code: 4 } });
      else expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^mediabatch: .*(401|Unauthenticated|token)/i);
      expect(hasStackTrace(result.stderr)).toBe(false);
      expect(result.stderr + result.stdout).not.toContain(wrong);
      expect(result.stderr + result.stdout).not.toContain(server.token);
    }
  });

  it('reads the token from --token-file; a missing file or no token at all is a clear message, exit 4', async () => {
    server = await startSecondServer();
    const temp = await tempDir();
    cleanup = temp.cleanup;
    const tokenFile = path.join(temp.dir, 'token.txt');
    await writeFile(tokenFile, `${server.token}\n`);

    const ok = await mainInProcess(['models', '--base-url', server.url, '--token-file', tokenFile, '--json']);
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as { models: unknown[] }).models).toHaveLength(60);

    const missingFile = path.join(temp.dir, 'nope.txt');
    const missing = await mainInProcess(['models', '--base-url', server.url, '--token-file', missingFile]);
    expect(missing.code).toBe(4);
    expect(missing.stderr.trim()).toBe(
      `mediabatch: --token-file ${missingFile}: cannot read it (ENOENT); give a readable file holding the API token`,
    );

    const none = await mainInProcess(['models', '--base-url', server.url]);
    expect(none.code).toBe(4);
    expect(none.stderr.trim()).toBe(
      'mediabatch: no API token: set MEDIABATCH_TOKEN or pass --token-file PATH (or try --sim to use the built-in simulator)',
    );
    expect(hasStackTrace(missing.stderr + none.stderr)).toBe(false);
    // Neither sent anything.
    expect(server.requests.filter((r) => r.authorization !== `Bearer ${server!.token}`)).toEqual([]);
  });
});
