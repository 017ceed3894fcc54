import { describe, expect, it } from 'vitest';
import type { Ledgers } from '../ledger-contract.js';
import { done, seed } from './fixtures.js';
import { eventsFor } from '../../support/events.js';

const SECRET_A = 'a'.repeat(31) + '-first-run-secret';
const SECRET_B = 'b'.repeat(40) + '-second-run-secret';

export function webhooksContract(ledgers: Ledgers): void {
  describe('webhooks', () => {
    it('keeps every run\'s secret, oldest first, and never writes one into the event log', async () => {
      const ledger = await ledgers.create();
      const first = await ledger.addWebhookRun(SECRET_A);
      const second = await ledger.addWebhookRun(SECRET_B);
      expect(second).toBeGreaterThan(first);
      expect(await ledger.webhookRuns()).toEqual([
        { id: first, secret: SECRET_A },
        { id: second, secret: SECRET_B },
      ]);
      const log = JSON.stringify(await eventsFor(ledger, null));
      expect(log).not.toContain(SECRET_A);
      expect(log).not.toContain(SECRET_B);
      // Another process (the next run) finds them: a delivery retried tomorrow is signed with the first.
      const later = await ledgers.reopen(ledger, { readonly: true });
      expect((await later.webhookRuns()).map((run) => run.secret)).toEqual([SECRET_A, SECRET_B]);
    });

    it('refuses a secret the service would refuse (32 to 255 characters) as a bug, storing nothing', async () => {
      const ledger = await ledgers.create();
      await expect(ledger.addWebhookRun('short')).rejects.toThrow(/^bug in mediabatch: /);
      await expect(ledger.addWebhookRun('x'.repeat(256))).rejects.toThrow(/^bug in mediabatch: /);
      expect(await ledger.webhookRuns()).toEqual([]);
    });

    it('finds a job by its request id, with the run that sent it, noted in the same commit as its request id', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1000, b: 1000 });
      const run = await ledger.addWebhookRun(SECRET_A);
      expect(await ledger.jobForDelivery('req-a')).toBeUndefined();
      expect(await ledger.reserveForSubmit('a', null, ['pending'])).toBe('reserved');
      // Asked together, as a run asks them: both are in once either has answered.
      const [submitted] = await Promise.all([ledger.markSubmitted('a', 'req-a'), ledger.noteWebhookRun('a', run)]);
      expect(submitted).toBe('submitted');
      const other = await ledgers.reopen(ledger);
      expect(await other.jobForDelivery('req-a')).toEqual({ id: 'a', type: 'txt2audio', state: 'submitted', paramsJson: JSON.stringify({ text: 'a' }), webhookRun: run });

      // Sent without webhooks: found, with no run to check a signature against.
      await ledger.reserveForSubmit('b', null, ['pending']);
      await ledger.markSubmitted('b', 'req-b');
      expect(await ledger.jobForDelivery('req-b')).toMatchObject({ id: 'b', webhookRun: null });

      // A later send by another run replaces the note; a finished job is still found, as done.
      const next = await ledger.addWebhookRun(SECRET_B);
      await ledger.noteWebhookRun('a', next);
      await ledger.markDone('a', done);
      expect(await ledger.jobForDelivery('req-a')).toMatchObject({ state: 'done', webhookRun: next });
    });

    it('records a delivery id once: the same id again is refused and writes nothing', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1000 });
      expect(await ledger.recordDelivery({ deliveryId: 'd-1', event: 'job.processing', jobId: 'a' })).toBe(true);
      expect(await ledger.recordDelivery({ deliveryId: 'd-1', event: 'job.completed', jobId: 'a' })).toBe(false);
      // A job this ledger does not know: recorded all the same, so its retries change nothing either.
      expect(await ledger.recordDelivery({ deliveryId: 'd-2', event: 'job.completed', jobId: null })).toBe(true);
      const other = await ledgers.reopen(ledger);
      expect(await other.recordDelivery({ deliveryId: 'd-2', event: 'job.completed', jobId: null })).toBe(false);
      expect(await other.recordDelivery({ deliveryId: 'd-1', event: 'job.processing', jobId: 'a' })).toBe(false);
      // Concurrent duplicates (one commit): exactly one is first.
      const answers = await Promise.all([1, 2, 3].map(() => ledger.recordDelivery({ deliveryId: 'd-3', event: 'job.failed', jobId: 'a' })));
      expect(answers.filter(Boolean)).toHaveLength(1);
    });

    it('a read-only handle reads the secrets and refuses to add one or record a delivery', async () => {
      const writer = await ledgers.create();
      await seed(writer, { a: 1000 });
      await writer.addWebhookRun(SECRET_A);
      const reader = await ledgers.reopen(writer, { readonly: true });
      expect(await reader.webhookRuns()).toHaveLength(1);
      for (const refusal of [
        reader.addWebhookRun(SECRET_B),
        reader.noteWebhookRun('a', 1),
        reader.recordDelivery({ deliveryId: 'd', event: 'job.completed', jobId: 'a' }),
      ]) {
        await expect(refusal).rejects.toThrow(/^bug in mediabatch: .*read-only/);
      }
      expect(await writer.webhookRuns()).toHaveLength(1);
    });
  });
}
