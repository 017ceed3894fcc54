import { createHmac } from 'node:crypto';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { collect, startCli } from '../helpers/cli.js';
import { startScripted } from '../security/servers.js';
import { until } from './helpers.js';

const SECRET = 'c'.repeat(40) + '-sim-command-secret';

describe('mediabatch sim --webhooks', () => {
  it('delivers the webhooks of jobs sent with webhook_url to the receiver address given', async () => {
    const receiver = await startScripted(() => ({ status: 200, body: '{}' }));
    const child = startCli(['sim', '--port', '0', '--webhooks', `127.0.0.1:${receiver.port}`]);
    const done = collect(child, 20_000);
    try {
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const url = ((await lines.next()).value as string).slice('listening on '.length);
      const token = ((await lines.next()).value as string).slice('token '.length);
      const submitted = await fetch(`${url}/api/v1/client/txt2audio`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify({
          text: 'Hello.', model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000,
          webhook_url: 'https://hooks.example.test/mb', webhook_secret: SECRET,
        }),
      });
      expect(submitted.status).toBe(200);
      await until(() => receiver.received.length === 2, 10_000);
      expect(receiver.received.map((req) => [req.url, req.headers['x-deapi-event']])).toEqual([
        ['/mb', 'job.processing'],
        ['/mb', 'job.completed'],
      ]);
      for (const req of receiver.received) {
        const expected = createHmac('sha256', SECRET).update(`${String(req.headers['x-deapi-timestamp'])}.${req.body}`).digest('hex');
        expect(req.headers['x-deapi-signature']).toBe(`sha256=${expected}`);
      }
    } finally {
      child.kill('SIGTERM');
      await receiver.close();
    }
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`webhooks of jobs sent with webhook_url go to http://127.0.0.1:${receiver.port}`);
  });
});
