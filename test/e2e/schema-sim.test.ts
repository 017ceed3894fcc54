import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { collect, ROOT, startCli } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';

describe('mediabatch schema', () => {
  it('prints a valid JSON Schema of the manifest, the one committed for editors', async () => {
    // The CLI's main in this process: what it prints (the sim below is the process's own start and stop).
    const result = await mainInProcess(['schema']);
    expect(result.code).toBe(0);
    const schema = JSON.parse(result.stdout) as Record<string, unknown> & { properties: Record<string, unknown> };
    expect(String(schema['$schema'])).toMatch(/^https?:\/\/json-schema\.org\//);
    expect(schema['type']).toBe('object');
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['version', 'budget', 'defaults', 'jobs']));
    expect(schema['additionalProperties']).toBe(false);
    // Structurally sound (no validator library here): known types, resolvable $refs, required ⊆ properties.
    const types = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (node === null || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if (typeof n['type'] === 'string') expect(types).toContain(n['type']);
      if (Array.isArray(n['type'])) for (const t of n['type']) expect(types).toContain(t);
      if (typeof n['$ref'] === 'string') {
        expect(n['$ref']).toMatch(/^#\//);
        const target = (n['$ref'] as string).slice(2).split('/').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], schema);
        expect(target, String(n['$ref'])).toBeTypeOf('object');
      }
      if (Array.isArray(n['required']) && n['properties'] !== undefined) {
        for (const key of n['required']) expect(Object.keys(n['properties'] as object)).toContain(key);
      }
      for (const value of Object.values(n)) walk(value);
    };
    walk(schema);
    const committed = JSON.parse(readFileSync(path.join(ROOT, 'manifests/mediabatch.schema.json'), 'utf8')) as unknown;
    expect(schema).toEqual(committed);
  });
});

describe('mediabatch sim', () => {
  it('prints "listening on http://127.0.0.1:PORT" first, serves models with the printed token, stops on SIGTERM', async () => {
    const child = startCli(['sim', '--port', '0']);
    const done = collect(child, 20_000);
    try {
      const lines = createInterface({ input: child.stdout! });
      const iterator = lines[Symbol.asyncIterator]();
      const first = (await iterator.next()).value as string;
      expect(first).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
      const url = first.slice('listening on '.length);
      const tokenLine = (await iterator.next()).value as string;
      expect(tokenLine).toMatch(/^token \S+$/);
      const token = tokenLine.slice('token '.length);

      const page = await fetch(`${url}/api/v1/client/models?limit=50&page=1&filter[inference_types]=txt2audio,img2video`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      });
      expect(page.status).toBe(200);
      const body = (await page.json()) as { data: { slug: string }[]; meta: { last_page: number } };
      expect(body.data.map((m) => m.slug)).toContain('Kokoro');
      expect(body.meta.last_page).toBeGreaterThanOrEqual(1);

      const refused = await fetch(`${url}/api/v1/client/models`, { headers: { authorization: 'Bearer nope', accept: 'application/json' } });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ message: 'Unauthenticated.' });
      lines.close();
    } finally {
      child.kill('SIGTERM');
    }
    const result = await done;
    expect(result.code).toBe(0);
  });
});
