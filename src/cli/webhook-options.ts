import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import type { WebhookSettings } from '../runner/index.js';

export interface WebhookArgs {
  'webhook-url'?: string | undefined;
  listen?: string | undefined;
}

export const DEFAULT_LISTEN = '127.0.0.1:8787';
/** The service takes a webhook URL of at most this many characters. */
const MAX_URL_CHARS = 2048;

export function withWebhookOptions<T>(argv: Argv<T>): Argv<T & WebhookArgs> {
  return argv
    .option('webhook-url', {
      type: 'string',
      describe: 'follow jobs by the service\'s signed webhooks: the public https:// URL it posts to, forwarded to --listen (env MEDIABATCH_WEBHOOK_URL)',
    })
    .option('listen', {
      type: 'string',
      describe: `where the webhook receiver listens, HOST:PORT (env MEDIABATCH_LISTEN, default ${DEFAULT_LISTEN})`,
    }) as Argv<T & WebhookArgs>;
}

/** The run's webhook settings from the flags, else the environment; undefined: follow by polling. */
export function webhookSettings(args: WebhookArgs, env: NodeJS.ProcessEnv): WebhookSettings | undefined {
  const [urlFrom, urlText] = args['webhook-url'] !== undefined ? ['--webhook-url', args['webhook-url']] : ['MEDIABATCH_WEBHOOK_URL', env['MEDIABATCH_WEBHOOK_URL']];
  const [listenFrom, listenText] = args.listen !== undefined ? ['--listen', args.listen] : ['MEDIABATCH_LISTEN', env['MEDIABATCH_LISTEN']];
  if (urlText === undefined || urlText === '') {
    if (args.listen !== undefined) throw new UsageError('--listen: the webhook receiver listens only with --webhook-url URL (the public address the service posts to)');
    return undefined;
  }
  return { url: parseWebhookUrl(urlFrom, urlText), listen: parseListen(listenFrom, listenText ?? DEFAULT_LISTEN) };
}

/** The service posts only to HTTPS addresses of at most 2048 characters: anything else is refused here, before a job is sent. */
export function parseWebhookUrl(from: string, text: string): string {
  const expected = `expected the public https:// address the service posts deliveries to (at most ${MAX_URL_CHARS} characters), such as https://hooks.example.com/mediabatch`;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new UsageError(`${from}: ${expected}; got ${JSON.stringify(text)}, which is not a URL`);
  }
  if (url.protocol !== 'https:') throw new UsageError(`${from}: ${expected}; got a URL of scheme ${url.protocol.replace(/:$/, '')} (the service posts webhooks over HTTPS only)`);
  if (url.href.length > MAX_URL_CHARS) throw new UsageError(`${from}: ${expected}; got ${url.href.length} characters`);
  if (url.hash !== '') throw new UsageError(`${from}: ${expected}; got a URL with a #fragment, which never reaches a server`);
  return url.href;
}

/** `HOST:PORT`, `[IPv6]:PORT`; port 0 takes a free one (the run prints which). */
export function parseListen(from: string, text: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (match === null || host === undefined || !(port >= 0 && port <= 65_535)) {
    throw new UsageError(`${from}: expected HOST:PORT for the webhook receiver, such as ${DEFAULT_LISTEN} (your proxy or tunnel forwards to it); got ${JSON.stringify(text)}`);
  }
  return { host, port };
}
