import { startSimulator, type SimOptions, type Simulator } from '../../src/sim/index.js';

/** Short job lifetimes so tests follow jobs to the end in well under a second. */
export const FAST: SimOptions = {
  pendingMs: { txt2audio: 20, img2video: 20, txt2img: 20, txt2video: 20 },
  processingMs: { txt2audio: 60, img2video: 60, txt2img: 60, txt2video: 60 },
};

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // Tests read into JSON freely; a wrong shape fails the assertion that reads it.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface CallOptions {
  method?: string;
  json?: unknown;
  form?: FormData;
  token?: string | null;
  accept?: string | null;
}

/** One call to the simulator over real loopback HTTP, as a client would make it. */
export async function call(sim: Simulator, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? sim.token : options.token;
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  const accept = options.accept === undefined ? 'application/json' : options.accept;
  if (accept !== null) headers['accept'] = accept;
  let body: string | FormData | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    body = options.form;
  }
  const method = options.method ?? (body === undefined ? 'GET' : 'POST');
  const res = await fetch(`${sim.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

export const AUDIO = { text: 'Welcome to the show.', model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 };

export const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 1, 0, 0, 0, 1, 0, 8, 2, 0, 0, 0]);

export const VIDEO = { model: 'Ltxv_13B_0_9_8_Distilled_FP8', width: 768, height: 432, steps: 1, frames: 120, fps: 30 };

export function videoForm(fields: Record<string, string | number> = {}, images: Record<string, Uint8Array> = { first_frame_image: PNG }): FormData {
  const form = new FormData();
  const all = { ...VIDEO, prompt: 'slow waves roll onto the beach', guidance: 0, seed: 42, ...fields };
  for (const [key, value] of Object.entries(all)) form.set(key, String(value));
  for (const [key, bytes] of Object.entries(images)) form.set(key, new Blob([bytes], { type: 'image/png' }), `${key}.png`);
  return form;
}

export const submitAudio = (sim: Simulator, overrides: Record<string, unknown> = {}): Promise<Answer> =>
  call(sim, '/api/v1/client/txt2audio', { json: { ...AUDIO, ...overrides } });

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls request-status until the job leaves pending/processing. */
export async function waitForEnd(sim: Simulator, requestId: string): Promise<Answer> {
  for (;;) {
    const answer = await call(sim, `/api/v1/client/request-status/${requestId}`);
    if (answer.body?.data?.status !== 'pending' && answer.body?.data?.status !== 'processing') return answer;
    await sleep(15);
  }
}

export { startSimulator, type Simulator };
