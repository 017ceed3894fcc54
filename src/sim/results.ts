/**
 * Result files and their pre-signed, expiring URLs, as a storage bucket serves them: no auth,
 * an HMAC over the path and expiry, 403 with an XML body once expired or tampered with.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import type { Reply } from './handlers.js';
import type { Clock } from '../clock.js';

/** A real WAV: 16-bit PCM mono, a 440 Hz tone of `seconds`, so clients can check the header. */
export function wavTone(sampleRate = 24000, seconds = 0.25): Buffer {
  const samples = Math.round(sampleRate * seconds);
  const dataBytes = samples * 2;
  const buf = Buffer.alloc(44 + dataBytes);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVE', 8, 'ascii');
  buf.write('fmt ', 12, 'ascii');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < samples; i++) {
    buf.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / sampleRate) * 8000), 44 + i * 2);
  }
  return buf;
}

/** A transcript or an OCR page: plain UTF-8 text, as the service gives `format: text`. */
export function transcriptText(): Buffer {
  const words = 'Welcome back to the show. Today: why the café’s espresso costs 3 € more <and> what to do.';
  return Buffer.from(`${words}\n`, 'utf8');
}

/** A transcript with timestamps (`include_ts`): its text and its segments, times in seconds. */
export function timestampedTranscript(): Buffer {
  const segments = [
    { start: 0, end: 1.84, text: 'Welcome back to the show.' },
    { start: 1.84, end: 6.2, text: 'Today: why the café’s espresso costs 3 € more <and> what to do.' },
  ];
  return Buffer.from(JSON.stringify({ text: segments.map((s) => s.text).join(' '), language: 'en', segments }));
}

/** An embedding as BGE-M3 makes one: 1024 numbers, the same every time, as a JSON list. */
export function embeddingJson(): Buffer {
  const vector = Array.from({ length: 1024 }, (_, i) => Math.round(Math.sin(i + 1) * 1e6) / 1e7);
  return Buffer.from(JSON.stringify(vector));
}

/**
 * A stand-in for a video: an `ftyp` box, a `free` box and an `mdat` of filler bytes. It starts
 * like an MP4 so type sniffing passes, but it is not a playable movie.
 */
export function mp4StandIn(): Buffer {
  const box = (type: string, payload: Buffer): Buffer => block(8 + payload.length, type, payload);
  const brands = Buffer.concat([Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41')]);
  return Buffer.concat([box('ftyp', brands), box('free', Buffer.alloc(0)), box('mdat', Buffer.alloc(2048, 0x5a))]);
}

/** A 32-bit big-endian length, a four-letter type, then the payload: how both MP4 boxes and PNG chunks start. */
function block(length: number, type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(length, 0);
  head.write(type, 4, 'ascii');
  return Buffer.concat([head, payload]);
}

/**
 * A real PNG: 8-bit RGB, `size`×`size` pixels of a diagonal gradient, one zlib-compressed IDAT,
 * correct CRCs, so browsers and decoders open it. What a text-to-image job's result looks like.
 * With `alpha`, RGBA whose corners fade out: what a background removal gives.
 */
export function pngImage(size = 64, alpha = false): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(data, crc32(type)), 0);
    return block(data.length, type, Buffer.concat([data, crc]));
  };
  const channels = alpha ? 4 : 3;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, alpha ? 6 : 2, 0, 0, 0], 8); // 8 bits, RGB(A), deflate, no filter method, no interlace
  const rows = Buffer.alloc(size * (1 + size * channels));
  for (let y = 0; y < size; y++) {
    const row = y * (1 + size * channels); // each row starts with filter type 0
    for (let x = 0; x < size; x++) {
      const opacity = 255 - Math.min(255, Math.round((Math.hypot(x - size / 2, y - size / 2) * 510) / size));
      const pixel = [(x * 255) / size, (y * 255) / size, 160, ...(alpha ? [opacity] : [])];
      rows.set(pixel, row + 1 + x * channels);
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

export class ResultSigner {
  constructor(
    private readonly secret: Buffer,
    private readonly clock: Clock,
  ) {}

  private sign(file: string, expiresMs: number): string {
    return createHmac('sha256', this.secret).update(`${file}\n${expiresMs}`).digest('hex');
  }

  /** A fresh URL for `file` (e.g. `<id>.wav`) valid for `ttlMs` from now. */
  url(baseUrl: string, file: string, ttlMs: number, now: number): string {
    const expires = now + ttlMs;
    return `${baseUrl}/results/${file}?expires=${expires}&sig=${this.sign(file, expires)}`;
  }

  /** 'ok', or why a bucket would refuse the URL. */
  check(file: string, expiresText: string | null, sig: string | null): 'ok' | 'expired' | 'bad-signature' {
    const expires = Number(expiresText);
    if (!expiresText || !Number.isFinite(expires) || !sig) return 'bad-signature';
    const expected = Buffer.from(this.sign(file, expires), 'hex');
    const given = Buffer.from(sig, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad-signature';
    return this.clock.nowMs() > expires ? 'expired' : 'ok';
  }
}

/** A refusal as a bucket words it: XML, never the API's JSON. */
export function bucketError(status: 403 | 404, code: string, message: string): Reply {
  const error = `<Error><Code>${code}</Code><Message>${message}</Message></Error>\n`;
  return { status, body: `<?xml version="1.0" encoding="UTF-8"?>\n${error}`, contentType: 'application/xml' };
}
