import { uniformPoll } from '../../src/runner/context.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Pace } from '../../src/runner/pace.js';
import { useWorkspace } from '../helpers/workspace.js';
import { runInProcess } from '../helpers/in-process.js';
import { ledgerRows } from '../reliability/helpers.js';
import { speechManifest, startProxy } from '../security/servers.js';

const FAST = { pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } };
const STATUS = /\/request-status\//;

describe('a 429 on status calls', () => {
  const workspace = useWorkspace();

  it.each([
    ['minute', 2],
    ['daily', 2],
  ])(
    'a %s limit with a Retry-After longer than any retry wait pauses every status call for as long as asked, then the run collects',
    async (limitType, retryAfterS) => {
      const sim = await workspace.startSim({ ...FAST });
      // A service's limiter: every status call within the window after the first is refused.
      let windowEndsMs: number | undefined;
      const refusedAtMs: number[] = [];
      const proxy = await startProxy(sim.url, {
        any: (req) => {
          if (!STATUS.test(req.url)) return undefined;
          windowEndsMs ??= Date.now() + retryAfterS * 1000;
          if (Date.now() >= windowEndsMs) return undefined;
          refusedAtMs.push(Date.now());
          return {
            status: 429,
            headers: { 'content-type': 'application/json', 'retry-after': String(retryAfterS), 'x-ratelimit-type': limitType },
            body: '{"message":"Too Many Attempts."}',
          };
        },
      });
      try {
        const dir = workspace.dir;
        const manifest = path.join(dir, 'paced.yaml');
        await writeFile(manifest, speechManifest([1, 2, 3, 4].map((i) => ({ id: `clip-${i}`, text: `paced status ${i}` }))));
        const pauses: { cls: string; untilMs: number }[] = [];
        const events = await runInProcess({
          manifest,
          ledgerPath: path.join(dir, 'paced.mediabatch.db'),
          outDir: path.join(dir, 'paced.out'),
          baseUrl: proxy.url,
          token: sim.token,
          pace: new Pace({}, { onPause: (cls, untilMs) => pauses.push({ cls, untilMs }) }),
          // The retry layer waits at most 50 ms: the service's seconds are the pace's to wait.
          options: { retry: { retries: 5, minDelayMs: 10, maxDelayMs: 50 } },
        });

        expect((await ledgerRows(path.join(dir, 'paced.mediabatch.db'))).map((r) => r.state)).toEqual(['done', 'done', 'done', 'done']);
        expect(events.filter((e) => e.kind === 'warning')).toEqual([]);
        // The whole status class paused once, for the service's window …
        expect(pauses.map((p) => p.cls)).toEqual(['status']);
        // … so only calls already on their way when the first 429 came were refused: no hammering.
        expect(refusedAtMs.length).toBeGreaterThanOrEqual(1);
        expect(refusedAtMs.length).toBeLessThanOrEqual(4);
        expect(sim.stats.accepted).toHaveLength(4);
      } finally {
        await proxy.close();
      }
    },
  );

  it("past a job's give-up time, leaves it submitted for the next run, saying until when status calls are paused", async () => {
    const sim = await workspace.startSim({ ...FAST });
    const proxy = await startProxy(sim.url, {
      any: (req) =>
        STATUS.test(req.url)
          ? { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '600' }, body: '{"message":"Too Many Attempts."}' }
          : undefined,
    });
    try {
      const dir = workspace.dir;
      const manifest = path.join(dir, 'late.yaml');
      await writeFile(manifest, speechManifest([{ id: 'clip-1', text: 'late status' }]));
      // Asked first after 50 ms, given up on after 10 ms: the first 429 comes past the give-up time.
      const schedule = { firstMs: 50, maxMs: 100, factor: 1.5, giveUpMs: 10 };
      const events = await runInProcess({
        manifest,
        ledgerPath: path.join(dir, 'late.mediabatch.db'),
        outDir: path.join(dir, 'late.out'),
        baseUrl: proxy.url,
        token: sim.token,
        options: { poll: uniformPoll(schedule) },
      });
      const rows = await ledgerRows(path.join(dir, 'late.mediabatch.db'));
      expect(rows.map((r) => r.state)).toEqual(['submitted']);
      expect(rows[0]?.last_error).toMatch(/^status calls are paused until /);
      const warnings = events.flatMap((e) => (e.kind === 'warning' ? [e.message] : []));
      expect(warnings).toHaveLength(1);
      for (const warning of warnings) expect(warning).toMatch(/status calls are paused until \d{4}-\d\d-\d\dT[\d:.]+Z \(GET \/api\/v1\/client\/request-status\/[^:]+: HTTP 429 rate limited; retry in 600 s/);
      // Asked once: a wait of 600 s is not the retry layer's to make, nor worth making for this job.
      expect(proxy.received.filter((r) => STATUS.test(r.url))).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });
});
