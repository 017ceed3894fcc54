import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { webhookSettings } from '../../src/cli/options.js';
import { parseListen, parseWebhookUrl } from '../../src/lib/options.js';
import { UsageError } from '../../src/errors.js';
import { hasStackTrace } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';

function usage(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('no usage error');
}

describe('--webhook-url and --listen', () => {
  const workspace = useWorkspace();

  it('take flags before the environment, and default the receiver to 127.0.0.1:8787', () => {
    expect(webhookSettings({}, {})).toBeUndefined();
    expect(webhookSettings({}, { MEDIABATCH_WEBHOOK_URL: 'https://h.example.com/in', MEDIABATCH_LISTEN: '0.0.0.0:9000' })).toEqual({
      url: 'https://h.example.com/in',
      listen: { host: '0.0.0.0', port: 9000 },
    });
    expect(webhookSettings({ 'webhook-url': 'https://a.example.com/x' }, { MEDIABATCH_WEBHOOK_URL: 'https://b.example.com/y' })).toEqual({
      url: 'https://a.example.com/x',
      listen: { host: '127.0.0.1', port: 8787 },
    });
    expect(parseListen('--listen', '[::1]:8080')).toEqual({ host: '::1', port: 8080 });
  });

  it('refuse what the service or a receiver could not use, saying what was expected', () => {
    expect(usage(() => parseWebhookUrl('--webhook-url', 'http://h.example.com/in'))).toBe(
      '--webhook-url: expected the public https:// address the service posts deliveries to (at most 2048 characters), such as https://hooks.example.com/mediabatch; got a URL of scheme http (the service posts webhooks over HTTPS only)',
    );
    expect(usage(() => parseWebhookUrl('MEDIABATCH_WEBHOOK_URL', 'hooks'))).toMatch(/^MEDIABATCH_WEBHOOK_URL: expected .*; got "hooks", which is not a URL$/);
    expect(usage(() => parseWebhookUrl('--webhook-url', `https://h.example.com/${'a'.repeat(2048)}`))).toMatch(/; got 2070 characters$/);
    expect(usage(() => parseListen('--listen', '8787'))).toBe(
      '--listen: expected HOST:PORT for the webhook receiver, such as 127.0.0.1:8787 (your proxy or tunnel forwards to it); got "8787"',
    );
    expect(usage(() => parseListen('--listen', 'localhost:70000'))).toMatch(/got "localhost:70000"$/);
    expect(usage(() => webhookSettings({ listen: '127.0.0.1:9000' }, {}))).toMatch(/^--listen: the webhook receiver listens only with --webhook-url URL/);
  });

  it('a bad flag exits 2, a port another program holds exits 4, and nothing is sent', async () => {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    // Refused before anything is sent: the CLI's main in this process (other spawns show exits 2 and 4 through a process).
    const bad = await mainInProcess(['run', manifest, '--sim', '--webhook-url', 'http://hooks.example.com/in']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--webhook-url: expected the public https:// address');

    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const held = await mainInProcess(['run', manifest, '--sim', '--webhook-url', 'https://hooks.example.com/in', '--listen', `127.0.0.1:${port}`]);
      expect(held.code, held.stderr).toBe(4);
      expect(held.stderr).toContain(`--listen 127.0.0.1:${port}: another program already listens there; stop it or pick another port (and point your proxy or tunnel at it). Nothing was sent.`);
      expect(hasStackTrace(held.stderr)).toBe(false);
      expect(existsSync(path.join(workspace.dir, 'batch.run.json'))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
