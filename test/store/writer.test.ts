import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalIoError } from '../../src/errors.js';
import { inlineWriter, type Ledger, type LedgerWriter } from '../../src/store/index.js';
import { deleteLedgerFiles } from '../helpers/ledger-files.js';
import { builtThreadWriter } from '../helpers/writer.js';
import { seed, useTempLedgers } from './helpers.js';

/** One suite for both writers: the CLI's (a thread of its own) and the in-thread one. */
const writers: [string, (ledger: Ledger) => LedgerWriter][] = [
  ['thread writer', (ledger) => builtThreadWriter(ledger.path)],
  ['inline writer', (ledger) => inlineWriter(ledger)],
];

describe.each(writers)('%s', (_name, makeWriter) => {
  const t = useTempLedgers();

  it('answers each call, and what it wrote is on the file when the answer comes', async () => {
    const ledger = t.open();
    seed(ledger, { a: 1, b: 2, c: 3 });
    const writer = makeWriter(ledger);
    try {
      const answers = await Promise.all([
        writer.write('reserveForSubmit', 'a', 3, ['pending']),
        writer.write('reserveForSubmit', 'b', 3, ['pending']),
        writer.write('reserveForSubmit', 'c', 3, ['pending']),
      ]);
      expect(answers).toEqual(['reserved', 'reserved', 'over-budget']);
      expect(ledger.spentUsd()).toBe(3);
      await writer.write('markSubmitted', 'a', 'req-a');
      expect(ledger.getJob('a')).toMatchObject({ state: 'submitted', requestId: 'req-a' });
    } finally {
      await writer.close();
    }
  });

  it('a call that fails is undone alone; the others of its turn still commit', async () => {
    const ledger = t.open();
    seed(ledger, { a: 1, b: 1 });
    const writer = makeWriter(ledger);
    try {
      const [a, bad, b] = await Promise.allSettled([
        writer.write('reserveForSubmit', 'a', null, ['pending']),
        writer.write('markSubmitted', 'nope', 'req-x'),
        writer.write('reserveForSubmit', 'b', null, ['pending']),
      ]);
      expect(a).toEqual({ status: 'fulfilled', value: 'reserved' });
      expect(b).toEqual({ status: 'fulfilled', value: 'reserved' });
      expect(bad.status).toBe('rejected');
      const reason = (bad as PromiseRejectedResult).reason as Error;
      expect(reason).not.toBeInstanceOf(LocalIoError);
      expect(reason.message).toBe('bug in mediabatch: job "nope" is not in the ledger (submitted)');
      expect(ledger.countsByState()).toMatchObject({ submitting: 2 });
    } finally {
      await writer.close();
    }
  });

  it('close waits for the writes asked for before it', async () => {
    const ledger = t.open();
    seed(ledger, { a: 1 });
    const writer = makeWriter(ledger);
    const reserved = writer.write('reserveForSubmit', 'a', null, ['pending']);
    const noted = writer.write('recordEvent', 'a', 'note', { n: 1 });
    await writer.close();
    // Read before awaiting the writes themselves: close alone must have waited for them.
    expect(ledger.getJob('a')?.state).toBe('submitting');
    expect(ledger.eventsFor('a').at(-1)).toMatchObject({ kind: 'note', detail: { n: 1 } });
    await expect(reserved).resolves.toBe('reserved');
    await expect(noted).resolves.toBeUndefined();
  });

  it('a ledger file deleted under it: nothing more is written, and the file comes back with every commit before', async () => {
    const ledger = t.open();
    seed(ledger, { a: 1, b: 1 });
    const writer = makeWriter(ledger);
    try {
      await writer.write('reserveForSubmit', 'a', null, ['pending']);
      await writer.write('markSubmitted', 'a', 'req-a');
      deleteLedgerFiles(ledger.path);

      const failure = await writer.write('reserveForSubmit', 'b', null, ['pending']).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LocalIoError);
      expect(failure).toMatchObject({ code: 'E_LEDGER_GONE', exitCode: 4 });
      expect((failure as Error).message).toMatch(/was deleted while this run was writing to it: nothing more is sent\. Everything it had recorded was written back to .*jobs\.mediabatch\.db; run the same command again to resume\.$/);
      // Later writes are refused the same way; the file written back is left alone.
      await expect(writer.write('recordEvent', null, 'note', {})).rejects.toMatchObject({ code: 'E_LEDGER_GONE' });
      expect(readdirSync(t.dir()).sort()).toEqual(['jobs.mediabatch.db']);
    } finally {
      await writer.close().catch(() => undefined);
    }
    const back = t.open('jobs.mediabatch.db', { readonly: true });
    expect(back.getJob('a')).toMatchObject({ state: 'submitted', requestId: 'req-a' });
    expect(back.getJob('b')).toMatchObject({ state: 'pending' });
  });

  it('a ledger file replaced by another: the records are saved beside it, the other file is untouched', async () => {
    const ledger = t.open();
    seed(ledger, { a: 1 });
    const writer = makeWriter(ledger);
    try {
      await writer.write('reserveForSubmit', 'a', null, ['pending']);
      for (const suffix of ['-wal', '-shm']) rmSync(`${ledger.path}${suffix}`, { force: true });
      renameSync(ledger.path, `${ledger.path}.moved`);
      writeFileSync(ledger.path, 'somebody else');
      await expect(writer.write('markSubmitted', 'a', 'req-a')).rejects.toThrow(
        /was replaced by another file while this run was writing to it: nothing more is sent\. Everything it had recorded was saved as .*jobs\.mediabatch\.db\.rescued; move it to /,
      );
    } finally {
      await writer.close().catch(() => undefined);
    }
    expect(readFileSync(ledger.path, 'utf8')).toBe('somebody else');
    const rescued = t.open('jobs.mediabatch.db.rescued', { readonly: true });
    expect(rescued.getJob('a')).toMatchObject({ state: 'submitting' });
  });
});

describe('thread writer', () => {
  const t = useTempLedgers();

  it("passes a ledger failure on as the LocalIoError it is, code and message", async () => {
    const writer = builtThreadWriter(join(t.dir(), 'no-such-folder', 'jobs.mediabatch.db'));
    try {
      const failure = await writer.write('recordEvent', null, 'note', {}).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LocalIoError);
      expect(failure).toMatchObject({ code: 'E_LEDGER_OPEN', exitCode: 4 });
      expect((failure as Error).message).toMatch(/^ledger .*no-such-folder\/jobs\.mediabatch\.db cannot be opened .*check that the folder exists and is writable$/);
    } finally {
      await writer.close();
    }
  });
});
