import { describe, expect, it } from 'vitest';
import { canonicalJson, contentHash } from '../../src/manifest/content-hash.js';

// Ledgers store these hashes: a change to the canonical form would mark every job of every
// existing ledger as changed. The expected strings were made by the first implementation.
describe('canonicalJson', () => {
  it('sorts keys by UTF-16 code units at every depth and leaves out undefined members', () => {
    const value = { b: 1, a: [1, undefined, { z: null, é: 2, A: 3, '\u{1F600}': 4, ä: undefined }], '': 'x', 'x"y': -0 };
    expect(canonicalJson(value)).toBe('{"":"x","a":[1,null,{"A":3,"z":null,"é":2,"😀":4}],"b":1,"x\\"y":0}');
  });

  it('writes empty containers and plain values as JSON does', () => {
    expect([canonicalJson({}), canonicalJson([]), canonicalJson('s'), canonicalJson(null), canonicalJson(2.5)]).toEqual(['{}', '[]', '"s"', 'null', '2.5']);
  });
});

describe('contentHash', () => {
  it('is the sha256 of the canonical form, unchanged from the first release', () => {
    const params = { model: 'Ltx', width: 768, height: 432, steps: 8, frames: 97, fps: 24, prompt: 'a beach', guidance: 1, seed: 3, negative_prompt: undefined };
    expect(contentHash({ type: 'img2video', params, images: { first_frame_image: 'ab'.repeat(32) } })).toBe(
      '75818bf269a28a88ed051bbe49f740b5f024a8e14b3e528e1697e1194ed3dd21',
    );
  });
});
