/**
 * A second, independent implementation of the service's models endpoint (docs/service.md, "The catalogue"),
 * written from the API description and not from the simulator, so e2e tests can check the CLI
 * against something that did not grow up with it. It also records every request it receives.
 *
 * - Bearer auth; a wrong or missing token gets 401 {"message":"Unauthenticated."}.
 * - GET /api/v1/client/models: a Laravel page; default page size 25, `limit` honoured up to 50,
 *   `per_page` ignored, `filter[inference_types]` a comma list (an unknown value gives an empty list).
 * - Records in the shapes the real service shows: `info: []`, `inference_types` as an object.
 * - Everything else: 404 {"message":"No query results for the requested resource."}.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SecondServerModel {
  slug: string;
  name: string;
  types: string[];
  typesAsObject: boolean;
  emptyInfo: boolean;
  voices: string[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
}

export interface SecondServer {
  url: string;
  token: string;
  models: SecondServerModel[];
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** `count` models alternating txt2audio/img2video, plus a few of another type that filters drop. */
export function secondServerModels(count: number): SecondServerModel[] {
  const models: SecondServerModel[] = [];
  for (let i = 0; i < count; i += 1) {
    const audio = i % 2 === 0;
    const n = String(i).padStart(3, '0');
    models.push({
      slug: audio ? `Second_Tts_${n}` : `Second_Video_${n}`,
      name: audio ? `Second TTS ${n}` : `Second Video ${n}`,
      types: audio ? ['txt2audio'] : ['img2video'],
      typesAsObject: i % 5 === 1,
      emptyInfo: i % 3 === 2,
      voices: audio ? [`v${n}_alpha`, `v${n}_beta`] : [],
    });
    // A model of a type mediabatch does not run every tenth place: it must not be listed.
    if (i % 10 === 4) {
      models.push({ slug: `Second_Edit_${n}`, name: `Second Edit ${n}`, types: ['img2sketch'], typesAsObject: false, emptyInfo: true, voices: [] });
    }
  }
  return models;
}

function record(model: SecondServerModel): Record<string, unknown> {
  const audio = model.types.includes('txt2audio');
  const info = model.emptyInfo
    ? []
    : audio
      ? { limits: { min_speed: 0.5, max_speed: 2, min_text: 1, max_text: 4000 }, features: {}, defaults: { speed: 1 } }
      : { limits: { min_frames: 30, max_frames: 120 }, features: { supports_last_frame: false }, defaults: {} };
  return {
    name: model.name,
    slug: model.slug,
    inference_types: model.typesAsObject ? Object.fromEntries(model.types.map((t) => [t, { slug: t, name: t }])) : model.types,
    info,
    ...(audio
      ? {
          languages: [
            { name: 'English', slug: 'en-us', voices: model.voices.map((v, i) => ({ name: v, slug: v, gender: i % 2 ? 'male' : 'female' })) },
          ],
        }
      : {}),
    tags: [],
    status: 'active',
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startSecondServer(options: { token?: string; models?: SecondServerModel[] } = {}): Promise<SecondServer> {
  const token = options.token ?? 'second-server-token-7f3a';
  const models = options.models ?? secondServerModels(60);
  const requests: RecordedRequest[] = [];

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
    });
    req.resume();
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { message: 'Unauthenticated.' });
      if (req.method !== 'GET' || url.pathname !== '/api/v1/client/models') {
        return send(res, 404, { message: 'No query results for the requested resource.' });
      }
      const limitRaw = Number(url.searchParams.get('limit'));
      const perPage = Number.isInteger(limitRaw) && limitRaw > 0 ? Math.min(limitRaw, 50) : 25;
      const pageRaw = Number(url.searchParams.get('page'));
      const page = Number.isInteger(pageRaw) && pageRaw > 0 ? pageRaw : 1;
      const filter = url.searchParams.get('filter[inference_types]');
      const wanted = filter === null || filter === '' ? undefined : filter.split(',').map((t) => t.trim());
      const matching = wanted === undefined ? models : models.filter((m) => m.types.some((t) => wanted.includes(t)));
      const total = matching.length;
      const lastPage = Math.max(1, Math.ceil(total / perPage));
      const from = (page - 1) * perPage;
      const data = matching.slice(from, from + perPage).map(record);
      const base = `http://${req.headers.host ?? '127.0.0.1'}/api/v1/client/models`;
      const link = (p: number) => `${base}?page=${p}`;
      send(res, 200, {
        data,
        links: { first: link(1), last: link(lastPage), prev: page > 1 ? link(page - 1) : null, next: page < lastPage ? link(page + 1) : null },
        meta: {
          current_page: page,
          from: data.length > 0 ? from + 1 : null,
          last_page: lastPage,
          path: base,
          per_page: perPage,
          to: data.length > 0 ? from + data.length : null,
          total,
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    models,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
