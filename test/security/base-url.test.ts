import { readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import { UsageError } from '../../src/errors.js';
import { hasStackTrace } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';

const SECRET = 'pw-LEAKCHECK-93be1f';
const USERINFO_REFUSED =
  'expected a URL without a user name or password, got one (not shown); the service takes a token: put it in MEDIABATCH_TOKEN or in a file given to --token-file';

const MANIFEST = [
  'version: 1',
  'defaults:',
  '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
  'jobs:',
  '  - { id: one, type: txt2audio, text: "Hello." }',
  '',
].join('\n');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

function expectNoSecretIn(dir: string): void {
  for (const file of filesUnder(dir)) {
    const bytes = readFileSync(file);
    expect(bytes.includes(SECRET), `password found in ${file}`).toBe(false);
    expect(bytes.includes(Buffer.from(SECRET, 'utf16le')), `password (UTF-16) found in ${file}`).toBe(false);
  }
}

describe('a base URL with a user or password', () => {
  const ws = useWorkspace();

  it('is refused by validate, estimate and run, from the flag or MEDIABATCH_BASE_URL: exit 2, never echoed, never stored', async () => {
    const sim = await ws.startSim();
    const file = path.join(ws.dir, 'm.yaml');
    await writeFile(file, MANIFEST);
    const withPassword = sim.url.replace('http://', `http://user:${SECRET}@`);
    const env = { MEDIABATCH_TOKEN: sim.token };
    const attempts = [
      { args: ['validate', file, '--base-url', withPassword], env, source: '--base-url' },
      { args: ['estimate', file, '--base-url', withPassword], env, source: '--base-url' },
      { args: ['run', file, '--base-url', withPassword, '--no-wait'], env, source: '--base-url' },
      { args: ['estimate', file], env: { ...env, MEDIABATCH_BASE_URL: withPassword }, source: 'MEDIABATCH_BASE_URL' },
      { args: ['models', '--base-url', sim.url.replace('http://', `http://${SECRET}@`)], env, source: '--base-url' },
    ];
    // Each refusal is decided from the arguments, before anything is sent: the CLI's main in this process.
    const results = [];
    for (const attempt of attempts) results.push(await mainInProcess(attempt.args, attempt.env));
    // First what was written: a refusal that came too late would have left the password behind.
    expectNoSecretIn(ws.dir);
    results.forEach((result, i) => {
      const label = `${attempts[i]?.args.join(' ')}: ${result.stderr}`;
      expect(result.code, label).toBe(2);
      expect(result.stderr, label).toBe(`mediabatch: ${attempts[i]?.source}: ${USERINFO_REFUSED}\n`);
      expect(result.stdout, label).not.toContain(SECRET);
      expect(hasStackTrace(result.stderr)).toBe(false);
    });
    expect(sim.stats.calls.models + sim.stats.calls.submit).toBe(0);
  });

  it('is not echoed when the URL cannot even be parsed, nor when a query carries it', async () => {
    const broken = await mainInProcess(['models', '--base-url', `http://user:${SECRET}@`], { MEDIABATCH_TOKEN: 't' });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toBe('mediabatch: --base-url: expected an http(s) URL such as https://api.deapi.ai, got "http://…@"\n');
    const query = await mainInProcess(['models', '--base-url', `http://127.0.0.1:9/?key=${SECRET}`], { MEDIABATCH_TOKEN: 't' });
    expect(query.code).toBe(2);
    expect(query.stderr).not.toContain(SECRET);
  });

  it('is refused by the client itself: the one check guards every way in', () => {
    expect(() => createServiceClient({ baseUrl: `https://user:${SECRET}@api.example`, token: 't' })).toThrow(UsageError);
    expect(() => createServiceClient({ baseUrl: `https://user:${SECRET}@api.example`, token: 't' })).toThrow(`--base-url: ${USERINFO_REFUSED}`);
  });
});
