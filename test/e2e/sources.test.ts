import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli, startCli } from '../helpers/cli.js';
import { describeEvent } from '../../src/cli/event-text.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { forward, startScripted, type Scripted } from '../security/servers.js';
import { byState, cliAgainst, collect, delay, FAST, ledgerRows, simArgs } from '../reliability/helpers.js';
import { estimateInProcess, readRunJson, runInProcessResult, type InProcessRun } from '../helpers/in-process.js';

const DEFAULTS = '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }';
const SUBMIT = /^\/api\/v1\/client\/txt2audio$/;

/** A folder with one source of each kind beside the manifest `book.yaml`: 11 jobs in all. */
async function writeBook(dir: string): Promise<{ manifest: string; ids: string[] }> {
  await mkdir(path.join(dir, 'chapters'));
  await mkdir(path.join(dir, 'notes'));
  await writeFile(path.join(dir, 'chapters/01.txt'), 'The first chapter begins here.\n');
  await writeFile(path.join(dir, 'chapters/02.txt'), 'The second chapter follows it.\n');
  await writeFile(path.join(dir, 'notes/a.txt'), 'A note about the narrator.\n');
  await writeFile(path.join(dir, 'notes/b.txt'), 'A note about the ending.\n');
  await writeFile(path.join(dir, 'chapters.csv'), 'chapter,file,narrator\nch-01,chapters/01.txt,af_sky\nch-02,chapters/02.txt,am_adam\n');
  await writeFile(path.join(dir, 'lines.tsv'), 'id\ttext\tspeed\nline-1\tHello, listener.\t1.1\nline-2\tGoodbye, listener.\t\n');
  await writeFile(path.join(dir, 'extra.jsonl'), '{"id": "j-1", "text": "From a JSON line."}\n\n{"id": "j-2", "text": "Another line.", "voice": "am_adam"}\n');
  const manifest = path.join(dir, 'book.yaml');
  await writeFile(
    manifest,
    [
      'version: 1',
      'defaults:',
      DEFAULTS,
      'sources:',
      '  - csv: chapters.csv',
      '    type: txt2audio',
      '    columns: { id: chapter, text_file: file, voice: narrator }',
      '    tags: [book]',
      '  - tsv: lines.tsv',
      '    type: txt2audio',
      '  - jsonl: extra.jsonl',
      '    type: txt2audio',
      '  - files: notes/*.txt',
      '    type: txt2audio',
      '    field: text_file',
      '    id: "note-{stem}"',
      '  - matrix:',
      '      voice: [af_sky, am_adam]',
      '      text: ["One.", "Two."]',
      '    type: txt2audio',
      '    id: "m-{voice}-{text.index}"',
      '',
    ].join('\n'),
  );
  const ids = ['ch-01', 'ch-02', 'line-1', 'line-2', 'j-1', 'j-2', 'note-a', 'note-b', 'm-af_sky-1', 'm-af_sky-2', 'm-am_adam-1', 'm-am_adam-2'];
  return { manifest, ids };
}

/** A run of `<dir>/<name>.yaml` in-process against `url`, its files where the CLI puts them. */
function inProcess(dir: string, name: string, url: string, token: string): InProcessRun {
  return { manifest: path.join(dir, `${name}.yaml`), ledgerPath: path.join(dir, `${name}.mediabatch.db`), outDir: path.join(dir, `${name}.out`), baseUrl: url, token };
}

/** What the simulator was asked to speak, in the order the submits arrived. */
function spokenTexts(server: Scripted): string[] {
  return server.received.filter((req) => req.method === 'POST' && SUBMIT.test(req.url)).map((req) => (JSON.parse(req.body) as { text: string }).text);
}

describe('sources end to end against the simulator', () => {
  const workspace = useWorkspace();
  const servers: Scripted[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('CSV, TSV, JSON Lines, files and a matrix: estimated, run, and every result on disk under its id', async () => {
    const sim = await workspace.startSim(FAST);
    const { manifest, ids } = await writeBook(workspace.dir);

    const book = inProcess(workspace.dir, 'book', sim.url, sim.token);
    const priced = await estimateInProcess(book);
    expect(priced.jobs.map((job) => job.id)).toEqual(ids);
    expect(priced.jobs.every((job) => job.priceMicro > 0)).toBe(true);

    const { result } = await runInProcessResult(book);
    expect(result.summary.counts).toMatchObject({ done: ids.length });
    const files = readdirSync(path.join(workspace.dir, 'book.out')).sort();
    expect(files).toEqual(ids.map((id) => `${id}.wav`).sort());
    expect(sim.stats.accepted).toHaveLength(ids.length);

    // Each row's own values reached the service: the CSV's voice column, the TSV's speed cell, the matrix.
    const rows = new Database(path.join(workspace.dir, 'book.mediabatch.db'), { readonly: true });
    const params = Object.fromEntries(
      (rows.prepare('SELECT id, params_json FROM jobs').all() as { id: string; params_json: string }[]).map((row) => [row.id, JSON.parse(row.params_json) as Record<string, unknown>]),
    );
    rows.close();
    expect(params['ch-02']).toMatchObject({ voice: 'am_adam' });
    expect(params['line-1']).toMatchObject({ speed: 1.1 });
    expect(params['line-2']).toMatchObject({ speed: 1 });
    expect(params['m-am_adam-2']).toMatchObject({ voice: 'am_adam' });
  });

  it('a run killed mid-way resumes from the ledger: nothing is paid twice, the submits it lost stay in doubt until asked', async () => {
    const sim = await workspace.startSim(FAST);
    const { manifest, ids } = await writeBook(workspace.dir);
    // The first four submits reach the simulator; the rest hang unanswered, as if the network had gone.
    let forwarded = 0;
    const held: string[] = [];
    const gate = await startScripted(async (req) => {
      if (req.method === 'POST' && SUBMIT.test(req.url)) {
        if (forwarded >= 4) {
          held.push(req.body);
          return new Promise(() => undefined);
        }
        forwarded += 1;
      }
      return forward(sim.url, req);
    });
    servers.push(gate);
    const child = startCli(['run', manifest, '--concurrency', '2', '--base-url', gate.url, '--plan', 'unlimited', '--poll-ms', '50'], { env: { MEDIABATCH_TOKEN: sim.token } });
    const ended = collect(child);
    const until = Date.now() + 30_000;
    while (held.length < 2 && Date.now() < until) await delay(10);
    expect(held).toHaveLength(2);
    child.kill('SIGKILL');
    await ended;

    // The two whose answer was lost may have been taken: never sent again by default (so not
    // every job is done: exit 1 at the CLI).
    const { result: resumed } = await runInProcessResult(inProcess(workspace.dir, 'book', sim.url, sim.token));
    expect(resumed.summary.counts).toMatchObject({ done: ids.length - 2, in_doubt: 2 });
    expect(sim.stats.accepted).toHaveLength(ids.length - 2);

    // They never reached the service: asking for them to be sent again costs each once.
    const asked = await cliAgainst(sim, ['run', manifest, '--resubmit-in-doubt']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(sim.stats.accepted).toHaveLength(ids.length);
    expect(sim.stats.duplicates()).toEqual([]);
    expect(readdirSync(path.join(workspace.dir, 'book.out')).sort()).toEqual(ids.map((id) => `${id}.wav`).sort());
  });

  it('bad rows in every format are all reported at once, each at its file, line and column', async () => {
    const dir = workspace.dir;
    await writeFile(path.join(dir, 'a.csv'), 'id,text,speed\nok-1,Fine.,1\nbad-speed,Too fast.,fast\nshort,Missing a cell\n');
    await writeFile(path.join(dir, 'b.tsv'), 'id\ttext\tvolume\nt-1\tHi.\t11\n');
    await writeFile(path.join(dir, 'c.jsonl'), '{"id": "j-1", "text": "Fine."}\nnot json at all\n{"id": "j-3", "txet": "typo"}\n');
    const manifest = path.join(dir, 'bad.yaml');
    await writeFile(
      manifest,
      [
        'version: 1',
        'defaults:',
        DEFAULTS,
        'sources:',
        '  - csv: a.csv',
        '    type: txt2audio',
        '  - tsv: b.tsv',
        '    type: txt2audio',
        '  - jsonl: c.jsonl',
        '    type: txt2audio',
        '  - files: missing/*.txt',
        '    type: txt2audio',
        '    field: text_file',
        '  - matrix:',
        '      speed: [1, -2]',
        '      text: ["One."]',
        '    type: txt2audio',
        '    id: "m-{speed.index}"',
        '',
      ].join('\n'),
    );
    // A refusal of what was read, before anything is sent: the CLI's main in this process.
    const result = await mainInProcess(['validate', manifest, '--offline']);
    expect(result.code).toBe(2);
    expect(hasStackTrace(result.stderr)).toBe(false);
    const lines = result.stderr;
    expect(lines).toMatch(/a\.csv:3:3 .*speed: expected a number above 0, got "fast"/);
    expect(lines).toMatch(/a\.csv:4:3 .*expected 3 cells \(as the header has\), got 2/);
    expect(lines).toMatch(/b\.tsv:1:3 .*volume/);
    expect(lines).toMatch(/c\.jsonl:2:1 .*JSON/);
    expect(lines).toMatch(/c\.jsonl:3:\d+ .*txet/);
    expect(lines).toMatch(/bad\.yaml:11:\d+ .*missing\/\*\.txt/);
    expect(lines).toMatch(/bad\.yaml:15:\d+ .*speed: expected a number above 0, got -2/);
    // Nothing was recorded for a manifest that does not validate.
    expect(existsSync(path.join(dir, 'bad.mediabatch.db'))).toBe(false);
  });

  it('a source edited between runs behaves like the same edit to inline jobs', async () => {
    const sim = await workspace.startSim(FAST);
    const dir = workspace.dir;
    const csv = path.join(dir, 'lines.csv');
    await writeFile(csv, 'id,text\nl-1,One.\nl-2,Two.\nl-3,Three.\n');
    const manifest = path.join(dir, 'lines.yaml');
    await writeFile(manifest, ['version: 1', 'defaults:', DEFAULTS, 'sources:', '  - csv: lines.csv', '    type: txt2audio', ''].join('\n'));
    const db = path.join(dir, 'lines.mediabatch.db');

    const lines = inProcess(dir, 'lines', sim.url, sim.token);
    expect((await runInProcessResult(lines)).result.summary.counts).toMatchObject({ done: 3 });
    const unitRead = (): string => {
      const ledger = new Database(db, { readonly: true });
      const row = ledger.prepare('SELECT read_at FROM units').get() as { read_at: string };
      ledger.close();
      return row.read_at;
    };
    const firstRead = unitRead();

    // Unchanged: the source is not read into the ledger again, and nothing is sent.
    expect((await runInProcessResult(lines)).result.summary.counts).toMatchObject({ done: 3 });
    expect(unitRead()).toBe(firstRead);
    expect(sim.stats.accepted).toHaveLength(3);

    // A row added, a row changed after it was sent, a row removed.
    await writeFile(csv, 'id,text\nl-1,One.\nl-2,"Two, said again."\nl-4,Four.\n');
    const edited = await runInProcessResult(lines);
    expect(edited.result.summary.counts).toMatchObject({ done: 4 });
    const warnings = edited.events.filter((event) => event.kind === 'warning').map((event) => describeEvent(event, 0));
    expect(warnings).toEqual([expect.stringContaining('warning: job "l-2" changed after it was submitted: it keeps its earlier result (done)')]);
    expect(sim.stats.accepted).toHaveLength(4);
    const rows = await ledgerRows(db);
    expect(rows.map((row) => [row.id, row.state])).toEqual([
      ['l-1', 'done'],
      ['l-2', 'done'],
      ['l-3', 'done'],
      ['l-4', 'done'],
    ]);
    // The removed row is no longer the manifest's, but its paid result is still counted and listed, marked so.
    const doc = await readRunJson<{ counts: Record<string, number>; jobs: { id: string; in_manifest: boolean }[] }>(lines.outDir);
    expect(doc.counts['done']).toBe(4);
    expect(doc.jobs.filter((job) => !job.in_manifest).map((job) => job.id)).toEqual(['l-3']);
  });

  it('split: a long text runs as parts, a failed part is sent again, and the WAV join is byte-exact', async () => {
    const sim = await workspace.startSim(FAST);
    const dir = workspace.dir;
    // About 14,000 characters of short sentences: three parts under Kokoro's 5,000.
    const sentences = Array.from({ length: 480 }, (_, i) => `Sentence number ${i + 1} is here.`);
    const text = `${sentences.slice(0, 240).join(' ')}\n\n${sentences.slice(240).join(' ')}\n`;
    await writeFile(path.join(dir, 'long.txt'), text);
    const manifest = path.join(dir, 'book.yaml');
    await writeFile(
      manifest,
      ['version: 1', 'defaults:', DEFAULTS, 'jobs:', '  - { id: chapter, type: txt2audio, text_file: long.txt, split: sentences }', '  - { id: short, type: txt2audio, text: "Short.", split: sentences }', ''].join('\n'),
    );
    // The first answer about the middle part (neither the first sentence nor the last) says it
    // failed, retryable and refunded; every other answer is the simulator's.
    const middle = new Set<string>();
    let failedOnce = false;
    const front = await startScripted(async (req) => {
      const reply = await forward(sim.url, req);
      if (req.method === 'POST' && SUBMIT.test(req.url)) {
        const { text: spoken } = JSON.parse(req.body) as { text: string };
        if (spoken.startsWith('Sentence') && !spoken.startsWith('Sentence number 1 ') && !spoken.endsWith('number 480 is here.')) {
          middle.add((JSON.parse(reply.body.toString()) as { data: { request_id: string } }).data.request_id);
        }
        return reply;
      }
      const asked = /\/request-status\/([0-9a-f-]{36})/.exec(req.url)?.[1];
      if (asked !== undefined && middle.has(asked) && !failedOnce) {
        failedOnce = true;
        const data = { status: 'error', progress: 100, result_url: null, error_code: 'WORKER_ERROR', error_message: 'The worker failed while generating.', retryable: true, refunded: true };
        return { status: 200, body: JSON.stringify({ data }) };
      }
      return reply;
    });
    servers.push(front);
    const book = inProcess(dir, 'book', front.url, sim.token);
    let last = (await runInProcessResult(book)).result.summary.counts;
    // A retryable, refunded failure is sent again (by this run's retries, or the next run).
    for (let tries = 0; last.done !== 4 && tries < 2; tries += 1) last = (await runInProcessResult(book)).result.summary.counts;
    expect(last).toMatchObject({ done: 4 });
    expect(failedOnce).toBe(true);

    const rows = await ledgerRows(path.join(dir, 'book.mediabatch.db'));
    expect(rows.map((row) => [row.id, row.state])).toEqual([
      ['chapter.p001', 'done'],
      ['chapter.p002', 'done'],
      ['chapter.p003', 'done'],
      ['short', 'done'],
    ]);
    // Every part under the limit, cut between sentences, and together the whole text.
    const spoken = spokenTexts(front);
    const parts = spoken.filter((t) => t.startsWith('Sentence'));
    const distinct = [...new Set(parts)];
    expect(distinct).toHaveLength(3);
    // The failed part twice (the simulator itself finished it: its failure was the front's), the others once.
    expect(parts).toHaveLength(4);
    expect(parts.filter((part) => part.startsWith('Sentence number 1 ') || part.endsWith('number 480 is here.'))).toHaveLength(2);
    for (const part of distinct) {
      expect([...part].length).toBeLessThanOrEqual(5000);
      expect(part).toMatch(/^Sentence number \d+ is here\.[\s\S]*is here\.$/);
    }
    expect(distinct.join(' ').replace(/\s+/g, ' ')).toBe(text.trim().replace(/\s+/g, ' '));

    const out = path.join(dir, 'book.out');
    expect(readFileSync(path.join(out, 'chapter.m3u'), 'utf8')).toBe('#EXTM3U\nchapter.p001.wav\nchapter.p002.wav\nchapter.p003.wav\n');
    expect(existsSync(path.join(out, 'short.m3u'))).toBe(false);
    // The simulator's WAVs have the canonical 44-byte header: one header, then every part's samples in order.
    const partFiles = ['p001', 'p002', 'p003'].map((p) => readFileSync(path.join(out, `chapter.${p}.wav`)));
    const joined = readFileSync(path.join(out, 'chapter.wav'));
    const samples = Buffer.concat(partFiles.map((file) => file.subarray(44)));
    expect(joined.subarray(44).equals(samples)).toBe(true);
    expect(joined.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(joined.readUInt32LE(4)).toBe(36 + samples.length);
    expect(joined.subarray(8, 36).equals(partFiles[0]!.subarray(8, 36))).toBe(true);
    expect(joined.subarray(36, 40).toString('latin1')).toBe('data');
    expect(joined.readUInt32LE(40)).toBe(samples.length);

    // A run that stopped between the last part and the join: the next run joins, sending nothing.
    await rm(path.join(out, 'chapter.m3u'));
    await rm(path.join(out, 'chapter.wav'));
    const accepted = sim.stats.accepted.length;
    const rejoin = await runInProcessResult(book);
    expect(rejoin.result.summary.counts).toMatchObject({ done: 4 });
    // The line the CLI prints for it.
    const joinedLines = rejoin.events.filter((event) => event.kind === 'joined').map((event) => describeEvent(event, 0));
    expect(joinedLines).toEqual([`joined   chapter: 3 parts into ${path.join(out, 'chapter.wav')}`]);
    expect(readFileSync(path.join(out, 'chapter.wav')).equals(joined)).toBe(true);
    expect(existsSync(path.join(out, 'chapter.m3u'))).toBe(true);
    expect(sim.stats.accepted).toHaveLength(accepted);
  });

  it('split: a sentence longer than the model takes is reported where it is in the text file', async () => {
    const sim = await workspace.startSim(FAST);
    const dir = workspace.dir;
    await writeFile(path.join(dir, 'long.txt'), `A short opening.\nThen ${'very '.repeat(1200)}long.\n`);
    const manifest = path.join(dir, 'book.yaml');
    await writeFile(manifest, ['version: 1', 'defaults:', DEFAULTS, 'jobs:', '  - { id: chapter, type: txt2audio, text_file: long.txt, split: sentences }', ''].join('\n'));
    const result = await mainInProcess(['validate', manifest, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(result.code).toBe(2);
    expect(hasStackTrace(result.stderr)).toBe(false);
    expect(result.stderr).toMatch(/long\.txt:2:1 job "chapter" \(#1\) text_file: expected sentences of at most 5000 characters \(the model's limit\), got one of 6010 characters at line 2, column 1 of the text: "Then very very/);
    expect(result.stderr).toContain('break that sentence up');
  });

  it('stdin: JSON Lines piped to -, with --db and --out, validated, run and resumed like a file', async () => {
    const sim = await workspace.startSim(FAST);
    const dir = workspace.dir;
    const input = [
      '{"id": "s-1", "type": "txt2audio", "text": "From standard input.", "model": "Kokoro", "voice": "af_sky", "lang": "en-us", "speed": 1, "format": "wav", "sample_rate": 24000}',
      '{"id": "s-2", "type": "txt2audio", "text": "A second line.", "model": "Kokoro", "voice": "am_adam", "lang": "en-us", "speed": 1, "format": "wav", "sample_rate": 24000}',
      '',
    ].join('\n');
    const db = path.join(dir, 'piped.db');
    const out = path.join(dir, 'piped.out');
    // The first run through a process reading its stdin; while it runs, the rest through the CLI's
    // main in this process, given the same bytes as its stdin.
    const firstRun = runCli(['run', '-', '--db', db, '--out', out, ...simArgs(sim)], { input, cwd: dir, env: { MEDIABATCH_TOKEN: sim.token } });
    const valid = await mainInProcess(['validate', '-', '--offline'], {}, input);
    const bad = await mainInProcess(['validate', '-', '--offline'], {}, '{"id": "x", "type": "txt2audio", "text": 5}\nnot json\n');
    const first = await firstRun;
    const again = await mainInProcess(['run', '-', '--db', db, '--out', out, ...simArgs(sim)], { MEDIABATCH_TOKEN: sim.token }, input);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toContain('<stdin>: 2 job(s), valid');

    // Refused from the arguments alone, before stdin is read: the CLI's entry point in this process.
    const missing = await mainInProcess(['run', '-', '--sim']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('reading jobs from stdin (the manifest -) needs --db PATH and --out DIR');

    expect(first.code, first.stderr).toBe(0);
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['s-1.wav', 's-2.wav']);
    expect(sim.stats.accepted).toHaveLength(2);

    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/<stdin>:1:\d+ .*text/);
    expect(bad.stderr).toMatch(/<stdin>:2:1 .*JSON/);
    // Each line is a whole job: there are no defaults to point at.
    expect(bad.stderr).toMatch(/<stdin>:1:1 job "x" model: expected .*, got nothing; set it on the job\n/);

    const noLedger = await mainInProcess(['status', '-']);
    expect(noLedger.code).toBe(2);
    expect(noLedger.stderr).toContain('reading jobs from stdin (the manifest -) needs --db PATH: there is no manifest file to name it after');
    expect(byState(await ledgerRows(db))).toEqual({ done: 2 });
  });

  it('stdin with no job (empty, or blank lines) is refused as jobs: [] is: exit 2, nothing sent', async () => {
    const sim = await workspace.startSim(FAST);
    const dir = workspace.dir;
    const message = '<stdin>:1:1 expected at least one job (one JSON object a line), got nothing; pipe or redirect the jobs in (< jobs.jsonl)\n1 problem in <stdin>; nothing was sent.\n';
    const db = path.join(dir, 'piped.db');
    // run through a process reading its empty stdin; validate's two through the CLI's main in this process meanwhile.
    const ran = runCli(['run', '-', '--db', db, '--out', path.join(dir, 'out'), ...simArgs(sim)], { input: '', cwd: dir, env: { MEDIABATCH_TOKEN: sim.token } });
    const empty = await mainInProcess(['validate', '-', '--offline'], {}, '');
    const blank = await mainInProcess(['validate', '-', '--offline'], {}, '\n  \n');
    const run = await ran;
    for (const valid of [empty, blank]) expect(valid).toMatchObject({ code: 2, stdout: '', stderr: message });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(message);
    expect(sim.stats.calls).toEqual(expect.objectContaining({ submit: 0 }));
  });
});
