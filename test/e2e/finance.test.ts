import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { expectDocument } from '../helpers/documents.js';
import { useWorkspace } from '../helpers/workspace.js';

/**
 * What finance and scripts get from the CLI: the files each command writes, the documents
 * checked against their committed JSON Schemas (docs/schemas), --format, and options from
 * MEDIABATCH_* variables with their precedence. Through the CLI's main in this process, with the
 * variables set as a shell sets them; a run and the completion script through the built CLI.
 */

/** Four speech jobs in two voices (two price groups), with a budget of its own. */
const MANIFEST = `version: 1
budget: 5
defaults:
  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }
jobs:
  - { id: one, type: txt2audio, text: "First line." }
  - { id: two, type: txt2audio, text: "Second one." }
  - { id: three, type: txt2audio, text: "Third line.", voice: am_adam }
  - { id: four, type: txt2audio, text: "Fourth line.", voice: am_adam }
`;

interface EstimateDocument {
  budget: number | null;
  plan: string;
  total: number;
  jobs: { id: string; price: number; price_source: string }[];
  groups: unknown[];
}

describe('finance output', () => {
  const workspace = useWorkspace();
  let sim: Simulator;
  let manifest: string;
  const file = (name: string) => path.join(workspace.dir, name);

  beforeEach(async () => {
    manifest = file('show.yaml');
    await writeFile(manifest, MANIFEST);
  });

  const against = (env: Record<string, string> = {}) => ({ MEDIABATCH_TOKEN: sim.token, MEDIABATCH_BASE_URL: sim.url, ...env });

  it('estimate writes four files of its own; --json follows the schema; MEDIABATCH_BUDGET beats the manifest and MEDIABATCH_PLAN=basic works', async () => {
    sim = await workspace.startSim();
    const result = await mainInProcess(['estimate', manifest, '--json'], against({ MEDIABATCH_BUDGET: '2.5', MEDIABATCH_PLAN: 'basic' }));
    expect(result.code, result.stderr).toBe(0);
    const doc = expectDocument<EstimateDocument>('estimate', result.stdout);
    expect(Object.keys(doc).slice(0, 8)).toEqual(['schema_version', 'total', 'spent', 'budget', 'within_budget', 'price_calls', 'jobs', 'by_model']);
    expect(doc).toMatchObject({ budget: 2.5, plan: 'basic' });
    expect(doc.groups).toHaveLength(2);

    expect(readFileSync(file('show.estimate.json'), 'utf8')).toBe(result.stdout);
    const csv = readFileSync(file('show.estimate.csv'), 'utf8').trimEnd().split('\n');
    expect(csv[0]).toBe('id,type,model,price_usd,price_source,to_send');
    expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(['one', 'two', 'three', 'four']);
    const groups = readFileSync(file('show.estimate.groups.csv'), 'utf8').trimEnd().split('\n');
    expect(groups[0]).toBe('type,model,voice,parameters,characters,jobs,price_source,jobs_quoted,jobs_derived,jobs_cached,price_calls,total_usd');
    expect(groups.slice(1).map((line) => line.split(',').slice(0, 6))).toEqual([
      ['txt2audio', 'Kokoro', 'af_sky', 'lang=en-us speed=1 format=wav sample_rate=24000', '22', '2'],
      ['txt2audio', 'Kokoro', 'am_adam', 'lang=en-us speed=1 format=wav sample_rate=24000', '23', '2'],
    ]);
    const markdown = readFileSync(file('show.estimate.md'), 'utf8');
    expect(markdown).toContain('| Budget | $2.50 |');
    expect(markdown).toContain('| txt2audio | Kokoro | am_adam |');
    // An estimate never writes the run's files (nor 0.1's shared report).
    for (const name of ['show.run.json', 'show.run.csv', 'show.report.json']) expect(existsSync(file(name)), name).toBe(false);
  });

  it('a --budget flag beats MEDIABATCH_BUDGET; --format md prints the markdown', async () => {
    sim = await workspace.startSim();
    const result = await mainInProcess(['estimate', manifest, '--format', 'md', '--budget', '1.25'], against({ MEDIABATCH_BUDGET: '2.5' }));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^# Cost estimate: show\.yaml\n/);
    expect(result.stdout).toContain('| Budget | $1.25 |');
  });

  it('a bad MEDIABATCH_ value is refused with the words of the bad flag, naming the variable; --format json gets the error document', async () => {
    const fromEnv = await mainInProcess(['estimate', manifest, '--sim'], { MEDIABATCH_PLAN: 'gold' });
    const fromFlag = await mainInProcess(['estimate', manifest, '--sim', '--plan', 'gold', '--format', 'json']);
    expect([fromEnv.code, fromFlag.code]).toEqual([2, 2]);
    expect(fromEnv.stderr).toBe('mediabatch: MEDIABATCH_PLAN: expected one of "basic", "premium", "unlimited", got "gold"\n');
    const message = '--plan: expected one of "basic", "premium", "unlimited", got "gold"';
    expect(fromFlag.stderr).toBe(`mediabatch: ${message}\n`);
    // --format json, like --json, puts a failure on stdout as the error document.
    expect(expectDocument('error', fromFlag.stdout)).toEqual({ schema_version: 1, error: { code: 'E_USAGE', message, exit_code: 2 } });
  });

  it('run writes its own two files with model and price source; run and status documents follow their schemas', async () => {
    const out = file('elsewhere');
    const ran = await mainInProcess(['run', manifest, '--sim', '--json'], { MEDIABATCH_OUT: out });
    expect(ran.code, ran.stderr).toBe(0);
    const summary = expectDocument<{ jobs: { id: string; output: string; tags: string[] }[] }>('run', ran.stdout);
    // MEDIABATCH_OUT chose the results folder.
    expect(summary.jobs.map((job) => path.relative(out, job.output))).toEqual(['one.wav', 'two.wav', 'three.wav', 'four.wav']);
    expect(summary.jobs.every((job) => job.tags.length === 0)).toBe(true);
    expect(expectDocument('run', readFileSync(file('show.run.json'), 'utf8'))).toMatchObject({ kind: 'run', finished: true });
    const csv = readFileSync(file('show.run.csv'), 'utf8').trimEnd().split('\n');
    expect(csv[0]).toBe('id,type,model,state,price_usd,price_source,request_id,output,error,tags,retryable,refunded,in_manifest');
    for (const line of csv.slice(1)) expect(line).toMatch(/^[a-z]+,txt2audio,Kokoro,done,0\.\d+,(quoted|derived|cached),/);
    for (const name of ['show.estimate.json', 'show.estimate.csv', 'show.estimate.md']) expect(existsSync(file(name)), name).toBe(false);

    const status = await mainInProcess(['status', manifest, '--json']);
    expect(status.code, status.stderr).toBe(0);
    const ledger = expectDocument<{ jobs: unknown[] }>('status', status.stdout);
    expect(ledger.jobs).toEqual(summary.jobs);
  });

  it('validate and models documents follow their schemas, problems in snake_case', async () => {
    await writeFile(manifest, 'version: 1\njobs:\n  - { id: a, type: txt2audio, text: hi, model: Kokoro, voise: x }\n');
    const invalid = await mainInProcess(['validate', manifest, '--offline', '--json']);
    expect(invalid.code).toBe(2);
    const doc = expectDocument<{ problems: Record<string, unknown>[] }>('validate', invalid.stdout);
    expect(doc.problems.find((problem) => problem['field'] === 'voise')).toMatchObject({ job_index: 0, job_id: 'a', line: 3 });
    const models = await mainInProcess(['models', '--sim', '--json']);
    expect(models.code, models.stderr).toBe(0);
    expect(expectDocument<{ models: { inference_types: string[] }[] }>('models', models.stdout).models.length).toBeGreaterThan(3);
  });

  it('completion prints a shell script, and the completion call lists the commands', async () => {
    // yargs answers these itself, outside the commands' exit codes: through the process.
    const [script, words] = await Promise.all([runCli(['completion']), runCli(['--get-yargs-completions', 'mediabatch', ''])]);
    expect(script.code).toBe(0);
    expect(script.stdout).toContain('complete -o bashdefault -o default -F _mediabatch_yargs_completions mediabatch');
    expect(script.stdout).toContain('mediabatch --get-yargs-completions');
    expect(words.stdout.trim().split('\n')).toEqual(['validate', 'estimate', 'run', 'status', 'log', 'report', 'models', 'sim', 'schema', 'completion']);
  });
});
