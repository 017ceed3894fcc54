import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The service signs each delivery as `sha256=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>`,
 * over the body's bytes exactly as they came: a body parsed and serialised again would not match.
 */
export function signatureOf(secret: string, timestamp: string, rawBody: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')}`;
}

/**
 * Whether `given` is the signature `secret` makes, compared in constant time: how long the
 * comparison takes says nothing about how much of a guess was right. Lengths differ only for a
 * malformed header, which is refused before any byte of the secret's signature is compared.
 */
export function signatureMatches(given: string, secret: string, timestamp: string, rawBody: Buffer): boolean {
  const expected = Buffer.from(signatureOf(secret, timestamp, rawBody), 'latin1');
  const offered = Buffer.from(given, 'latin1');
  return offered.length === expected.length && timingSafeEqual(offered, expected);
}

/** A new run's secret: 64 hex characters (the service takes 32 to 255) from 32 random bytes. */
export function newWebhookSecret(): string {
  return randomBytes(32).toString('hex');
}
