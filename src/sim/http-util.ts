/**
 * Reading requests and writing answers. Handlers return a Reply; only the server writes it,
 * so faults can replace, delay or drop an answer after the work behind it was done.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Fields } from './rules.js';

export interface Reply {
  status: number;
  body: string | Buffer;
  contentType: string;
  headers?: Record<string, string>;
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, body: JSON.stringify(body), contentType: 'application/json', ...(headers ? { headers } : {}) };
}

/** An error as the service sends it: a top-level message, plus `errors` on a 422. */
export function apiError(status: number, message: string, errors?: Record<string, string[]>): Reply {
  return json(status, errors ? { message, errors } : { message });
}

export function html(status: number, title: string): Reply {
  const head = `<!DOCTYPE html>\n<html><head><title>${status} ${title}</title></head>\n`;
  const body = `<body><center><h1>${status} ${title}</h1></center><hr><center>nginx</center></body></html>\n`;
  return { status, body: head + body, contentType: 'text/html; charset=UTF-8' };
}

/** The whole request body, or undefined when over `maxBytes` (read to its end all the same). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  // Keep reading to the end even when too large, so the client sees our answer, not a reset.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total <= maxBytes) chunks.push(chunk);
  }
  return total > maxBytes || Number(req.headers['content-length'] ?? 0) > maxBytes ? undefined : Buffer.concat(chunks);
}

/**
 * Form fields from a JSON, multipart or urlencoded body. Like Laravel, a body it cannot read
 * counts as no fields at all, which then fails validation as "required".
 */
export async function parseFields(req: IncomingMessage, body: Buffer): Promise<Fields> {
  const contentType = req.headers['content-type'] ?? '';
  const type = contentType.toLowerCase();
  try {
    if (type.includes('json')) {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Fields) : {};
    }
    if (!type.startsWith('multipart/form-data') && !type.startsWith('application/x-www-form-urlencoded')) return {};
    const request = new Request('http://sim.local/', { method: 'POST', headers: { 'content-type': contentType }, body });
    return Object.fromEntries(await request.formData());
  } catch {
    return {};
  }
}

export function writeReply(req: IncomingMessage, res: ServerResponse, reply: Reply, extraHeaders: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  let { body, contentType } = reply;
  const accept = req.headers.accept ?? '';
  // Errors go out as HTML to clients that did not ask for JSON, as the real service does.
  const wantsJson = accept.includes('json') || accept.includes('*/*');
  if (reply.status >= 400 && contentType === 'application/json' && !wantsJson) {
    const message = (JSON.parse(String(body)) as { message?: string }).message ?? 'Error';
    ({ body, contentType } = html(reply.status, message));
  }
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(reply.status, {
    ...extraHeaders,
    ...reply.headers,
    'Content-Type': contentType,
    'Content-Length': String(payload.length),
  });
  res.end(req.method === 'HEAD' ? undefined : payload);
}
