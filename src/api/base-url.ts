import { UsageError } from '../errors.js';

// For messages only: a URL too broken to parse may still hold a password before its `@`.
function redacted(raw: string): string {
  return raw.replace(/^([^:/?#]*:\/\/)[^/?#]*@/, '$1…@');
}

/**
 * Checks a base URL wherever it comes from (`source` names the flag or variable in messages):
 * http(s), and nothing the client would not send. A user or password is refused rather than
 * dropped: the service takes a bearer token, and a URL kept with one would carry the password
 * into the ledger's caches and the messages that quote it. Never echoes what it refuses.
 */
export function parseBaseUrl(raw: string, source = '--base-url') {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    throw new UsageError(`${source}: expected an http(s) URL such as https://api.deapi.ai, got ${JSON.stringify(redacted(raw))}`, error);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`${source}: expected an http(s) URL such as https://api.deapi.ai, got a ${url.protocol} URL`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new UsageError(
      `${source}: expected a URL without a user name or password, got one (not shown); the service takes a token: put it in MEDIABATCH_TOKEN or in a file given to --token-file`,
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new UsageError(`${source}: expected a URL without a query or fragment (they would never be sent), got one (not shown); give only the address and path`);
  }
  const basePath = url.pathname.replace(/\/+$/, ''); // '' for none
  // `text`, origin and path, nothing else: what the ledger keys its caches by.
  return { text: `${url.origin}${basePath}`, origin: url.origin, basePath };
}
