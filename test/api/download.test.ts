import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { redirectRefusal } from '../../src/api/download.js';
import { NetworkError, ResultUrlError, ResultUrlExpiredError, ServerError } from '../../src/api/errors.js';
import { LocalIoError } from '../../src/errors.js';
import { startScriptedServer } from './scripted-server.js';
import { rejectionOf, TOKEN, useCleanup, useScripted } from './setup.js';

const scripted = useScripted();
const track = useCleanup();
const AUDIO = Buffer.from('RIFF....WAVEfmt '.repeat(64));
const SHA = createHash('sha256').update(AUDIO).digest('hex');

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediabatch-dl-'));
  track(() => rm(dir, { recursive: true, force: true }));
});

describe('download', () => {
  it('streams the result to disk with its size and sha256, without the Authorization header', async () => {
    const { server, client } = await scripted([{ body: AUDIO, headers: { 'content-type': 'audio/wav' } }]);
    const dest = join(dir, 'a.wav.part');
    const result = await client.download(`${server.url}/results/a.wav?X-Amz-Signature=secret`, dest, { maxBytes: 1_000_000 });
    expect(result).toEqual({ bytes: AUDIO.length, sha256: SHA, contentType: 'audio/wav' });
    expect(await readFile(dest)).toEqual(AUDIO);
    const [request] = server.requests;
    expect(request?.url).toBe('/results/a.wav?X-Amz-Signature=secret');
    expect(request?.headers['authorization']).toBeUndefined();
    expect(JSON.stringify(request?.headers)).not.toContain(TOKEN);
  });

  it('follows up to 3 same-origin redirects and refuses a 4th', async () => {
    const hop = (to: string) => ({ status: 302, headers: { location: to } });
    const { server, client } = await scripted([hop('/b'), hop('/c'), hop('/d'), { body: AUDIO }, hop('/b'), hop('/c'), hop('/d'), hop('/e')]);
    const ok = await client.download(`${server.url}/a`, join(dir, 'ok'), { maxBytes: 1_000_000 });
    expect(ok.sha256).toBe(SHA);
    expect(server.requests.map((request) => request.url)).toEqual(['/a', '/b', '/c', '/d']);
    const error = await rejectionOf(client.download(`${server.url}/a`, join(dir, 'no'), { maxBytes: 1_000_000 }));
    expect(error).toMatchObject({ name: 'ResultUrlError', reason: 'redirect' });
    expect((error as Error).message).toContain('more than 3 redirects');
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });

  it.each([
    ['http://127.0.0.1:8000/a.wav?sig=1', 'http://127.0.0.1:8000/b.wav', undefined],
    ['https://api.example/r?sig=1', 'https://bucket.storage.example/r.wav?X-Amz-Signature=2', undefined],
    ['http://127.0.0.1:8000/a.wav', 'https://cdn.example/a.wav', undefined],
    ['https://cdn.example/a.wav', 'http://cdn.example/a.wav', 'redirected to plain http on another origin (http://cdn.example); only https redirects leave the origin'],
    ['http://127.0.0.1:8000/a.wav', 'http://127.0.0.1:9000/a.wav', 'redirected to plain http on another origin (http://127.0.0.1:9000); only https redirects leave the origin'],
    ['https://cdn.example/a.wav', 'ftp://cdn.example/a.wav', 'redirected to a ftp: URL; only http and https results are fetched'],
    ['https://cdn.example/a.wav', 'file:///etc/passwd', 'redirected to a file: URL; only http and https results are fetched'],
  ])('a redirect from %s to %s: %s', (from, to, refusal) => {
    expect(redirectRefusal(new URL(from), new URL(to))).toBe(refusal);
  });

  it('refuses a redirect to plain http on another origin without contacting it', async () => {
    const elsewhere = await startScriptedServer([{ body: AUDIO }]);
    track(() => elsewhere.close());
    const { client, server } = await scripted([{ status: 302, headers: { location: `${elsewhere.url}/steal` } }]);
    const error = await rejectionOf(client.download(`${server.url}/r?sig=1`, join(dir, 'x'), { maxBytes: 1_000_000 }));
    expect(error).toBeInstanceOf(ResultUrlError);
    expect(error).toMatchObject({ reason: 'redirect', path: `${server.url}/r` });
    expect((error as Error).message).not.toContain('sig=1');
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('refuses a declared Content-Length over maxBytes', async () => {
    const { server, client } = await scripted([{ body: AUDIO }]);
    const dest = join(dir, 'big');
    const error = await rejectionOf(client.download(`${server.url}/big`, dest, { maxBytes: 100 }));
    expect(error).toMatchObject({ name: 'ResultUrlError', reason: 'too-large' });
    expect((error as Error).message).toContain(`Content-Length ${AUDIO.length}`);
    expect(existsSync(dest)).toBe(false);
  });

  it('refuses and removes a streamed body that grows past maxBytes', async () => {
    const { server, client } = await scripted([{ partialBody: 'x'.repeat(80), stallMs: 20, body: 'y'.repeat(200) }]);
    const dest = join(dir, 'stream');
    const error = await rejectionOf(client.download(`${server.url}/s`, dest, { maxBytes: 100 }));
    expect(error).toMatchObject({ name: 'ResultUrlError', reason: 'too-large' });
    expect(existsSync(dest)).toBe(false);
  });

  it('a body cut short by the server is a network failure (retried later), not a local write failure', async () => {
    const { server, client } = await scripted([
      { headers: { 'content-length': '10000' }, partialBody: 'x'.repeat(100), stallMs: 50, hangUp: true },
    ]);
    const dest = join(dir, 'cut.wav.part');
    const error = await rejectionOf(client.download(`${server.url}/cut.wav?sig=1`, dest, { maxBytes: 1_000_000 }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(LocalIoError);
    expect((error as Error).message).not.toContain('cannot write');
    expect((error as Error).message).not.toContain('sig=1');
    expect(existsSync(dest)).toBe(false);
  });

  it('a file that cannot be written is a local failure naming the file', async () => {
    const { server, client } = await scripted([{ body: AUDIO }]);
    const dest = join(dir, 'no-such-folder', 'a.wav.part');
    const error = await rejectionOf(client.download(`${server.url}/a.wav`, dest, { maxBytes: 1_000_000 }));
    expect(error).toBeInstanceOf(LocalIoError);
    expect((error as Error).message).toContain(`cannot write ${dest}`);
  });

  it.each(['file:///etc/passwd', 'ftp://example.com/a.mp3', 'javascript:alert(1)', 'not a url'])(
    'refuses %s without sending anything',
    async (url) => {
      const { client } = await scripted([]);
      const error = await rejectionOf(client.download(url, join(dir, 'x'), { maxBytes: 100 }));
      expect(error).toBeInstanceOf(ResultUrlError);
      expect(error).toMatchObject({ reason: 'scheme', requestSent: false });
    },
  );

  it('turns 403 and 404 into ResultUrlExpiredError, 500 into ServerError', async () => {
    const { server, client } = await scripted([
      { status: 403, body: '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>' },
      { status: 404, body: 'gone' },
      { status: 500, body: 'oops' },
    ]);
    const url = `${server.url}/r.mp3?Expires=1`;
    const expired = await rejectionOf(client.download(url, join(dir, 'x'), { maxBytes: 1_000 }));
    expect(expired).toBeInstanceOf(ResultUrlExpiredError);
    expect(expired).toMatchObject({ status: 403, path: `${server.url}/r.mp3` });
    expect((expired as Error).message).toContain('fetch the request status again');
    expect(await rejectionOf(client.download(url, join(dir, 'x'), { maxBytes: 1_000 }))).toBeInstanceOf(ResultUrlExpiredError);
    expect(await rejectionOf(client.download(url, join(dir, 'x'), { maxBytes: 1_000 }))).toBeInstanceOf(ServerError);
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });
});
