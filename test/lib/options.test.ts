import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../../src/errors.js';
import { estimateSettings, requireNames, runSettings, serviceAddress } from '../../src/lib/call-options.js';
import { DEFAULT_BASE_URL } from '../../src/lib/options.js';

/** The message of what `call` throws, with its class. */
function refusal(call: () => unknown): { name: string; message: string } {
  try {
    call();
  } catch (error) {
    return { name: (error as Error).name, message: (error as Error).message };
  }
  throw new Error('expected a refusal');
}

describe('library options', () => {
  it('take the CLI defaults: premium pace (unlimited under sim), 2 retries, the service poll (the simulator poll under sim)', () => {
    const plain = runSettings({});
    expect(plain).toMatchObject({ plan: 'premium', retryFailed: 2, poll: 'service', maxResultBytes: 110 * 1024 * 1024 });
    expect(plain.concurrency).toBeUndefined();
    expect(plain.budgetMicro).toBeUndefined();
    expect(plain.webhooks).toBeUndefined();
    expect(runSettings({ sim: true })).toMatchObject({ plan: 'unlimited', poll: 'simulator' });
    expect(runSettings({ pollMs: 50, budget: 12.5, concurrency: 3, plan: 'basic' })).toMatchObject({
      poll: { firstMs: 50 },
      budgetMicro: 12_500_000,
      concurrency: 3,
      plan: 'basic',
    });
    expect(runSettings({ webhookUrl: 'https://hooks.example.com/in' }).webhooks).toEqual({
      url: 'https://hooks.example.com/in',
      listen: { host: '127.0.0.1', port: 8787 },
    });
  });

  it('are checked by the flags\' rules, each message naming the option as the library spells it', () => {
    expect(refusal(() => estimateSettings({ concurrency: 0 }))).toEqual({
      name: 'UsageError',
      message: 'concurrency: expected a whole number from 1 to 64, got "0"',
    });
    expect(refusal(() => estimateSettings({ budget: -1 })).message).toBe('budget: expected a number of USD ≥ 0 (such as 25 or 12.50), got "-1"');
    expect(refusal(() => estimateSettings({ plan: 'gold' as 'basic' })).message).toBe('plan: expected one of "basic", "premium", "unlimited", got "gold"');
    expect(refusal(() => estimateSettings({ only: [''] })).message).toBe('only: expected an id or a glob such as "ch-0*", got an empty value (or an empty item of a comma list)');
    expect(refusal(() => estimateSettings({ redo: ['ch-*'] })).message).toMatch(/^redo takes ids of done or failed jobs, not patterns: got "ch-\*"/);
    expect(refusal(() => runSettings({ retries: 21 })).message).toBe('retries: expected a whole number of retries from 0 to 20, got "21"');
    expect(refusal(() => runSettings({ pollMs: 2.5 })).message).toBe('pollMs: expected a whole number of milliseconds from 10 to 600000, got "2.5"');
    expect(refusal(() => runSettings({ listen: '0.0.0.0:9000' })).message).toBe(
      'listen: the webhook receiver listens only with webhookUrl (the public address the service posts to)',
    );
    expect(refusal(() => runSettings({ webhookUrl: 'http://hooks.example.com/in' })).message).toMatch(/^webhookUrl: expected the public https:\/\/ address/);
  });

  it('need a token unless sim, and a base URL that parses; nothing is read from the environment', () => {
    const token = process.env['MEDIABATCH_TOKEN'];
    process.env['MEDIABATCH_TOKEN'] = 'from-the-environment';
    try {
      const missing = (() => {
        try {
          serviceAddress({});
        } catch (error) {
          return error;
        }
      })();
      expect(missing).toBeInstanceOf(ConfigError);
      expect(missing).toMatchObject({ code: 'E_TOKEN', exitCode: 4 });
    } finally {
      if (token === undefined) delete process.env['MEDIABATCH_TOKEN'];
      else process.env['MEDIABATCH_TOKEN'] = token;
    }
    expect(serviceAddress({ sim: true })).toEqual({ sim: true });
    expect(serviceAddress({ token: ' t0k ' })).toEqual({ baseUrl: DEFAULT_BASE_URL, token: 't0k' });
    expect(refusal(() => serviceAddress({ token: 't', baseUrl: 'ftp://example.com' })).name).toBe('UsageError');
  });

  it('name the ledger and the results of a manifest given as a value or as jobs: db (and out for a run) are required', () => {
    expect(() => requireNames('batch.yaml', {}, true)).not.toThrow();
    expect(() => requireNames({ version: 1 }, { db: 'a.db' }, false)).not.toThrow();
    expect(() => requireNames([], { db: 'a.db' }, true)).toThrow(UsageError);
    expect(refusal(() => requireNames([], {}, true)).message).toBe(
      'a manifest given as a value or as jobs needs the db and out options: there is no manifest file to name them after',
    );
  });
});
