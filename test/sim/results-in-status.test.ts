import { afterEach, describe, expect, it } from 'vitest';
import { call, FAST, startSimulator, waitForEnd, type Simulator } from './helpers.js';

const EMBED = { model: 'Bge_M3_FP16', input: 'the quick brown fox' };

describe('the simulator: an embedding in the status or as a file', () => {
  let sim: Simulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  it('gives the numbers in `result` when the submit asks, else a file behind `result_url`', async () => {
    sim = await startSimulator(FAST);
    const asked = await call(sim, '/api/v1/client/txt2embedding', { json: { ...EMBED, return_result_in_response: true } });
    const inline = (await waitForEnd(sim, asked.body.data.request_id as string)).body.data;
    expect(inline.result_url).toBeNull();
    const numbers = JSON.parse(String(inline.result)) as number[];
    expect(numbers).toHaveLength(1024);

    const plain = await call(sim, '/api/v1/client/txt2embedding', { json: EMBED });
    const filed = (await waitForEnd(sim, plain.body.data.request_id as string)).body.data;
    expect(filed.result).toBeNull();
    const file = await fetch(String(filed.result_url));
    expect(file.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(await file.text())).toEqual(numbers);
  });

  it('is priced by the input, and takes the flag as Laravel does: 1 or true, never the string "true"', async () => {
    sim = await startSimulator(FAST);
    const price = async (input: string) => (await call(sim!, '/api/v1/client/txt2embedding/price-calculation', { json: { ...EMBED, input } })).body.data.price as number;
    expect(await price('x'.repeat(200))).toBeCloseTo(2 * (await price('x'.repeat(100))), 10);
    const refused = await call(sim, '/api/v1/client/txt2embedding', { json: { ...EMBED, return_result_in_response: 'true' } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual({ return_result_in_response: ['The return result in response field must be true or false.'] });
    expect((await call(sim, '/api/v1/client/txt2embedding', { json: { ...EMBED, return_result_in_response: '1' } })).status).toBe(200);
  });
});
