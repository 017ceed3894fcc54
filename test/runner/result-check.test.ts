import { describe, expect, it } from 'vitest';
import { resultMismatch } from '../../src/runner/download.js';
import { mp4StandIn, wavTone } from '../../src/sim/results.js';

const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))));

describe('a result is checked against what its job kind produces', () => {
  it.each([
    ['WAV', wavTone()],
    ['MP3 with a tag', bytes('ID3', [4, 0, 0, 0, 0, 0, 0])],
    ['MP3 frame', bytes([0xff, 0xfb, 0x90, 0x64])],
    ['FLAC', bytes('fLaC', [0, 0, 0, 34])],
    ['Ogg', bytes('OggS', [0, 2])],
    ['M4A', bytes([0, 0, 0, 0x20], 'ftypM4A ')],
  ])('speech: %s is audio', (_name, head) => {
    expect(resultMismatch('audio', head, 'application/octet-stream')).toBeUndefined();
  });

  it.each([
    ['MP4', mp4StandIn()],
    ['MOV', bytes([0, 0, 0, 0x14], 'ftypqt  ')],
    ['WebM', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f])],
    ['GIF', bytes('GIF89a', [1, 0, 1, 0])],
  ])('video: %s is video', (_name, head) => {
    expect(resultMismatch('video', head, undefined)).toBeUndefined();
  });

  it.each([
    ['audio', bytes('<!DOCTYPE html><html><body>Access Denied</body></html>'), 'text/html; charset=utf-8', 'the result is not audio: its bytes are an HTML page, Content-Type text/html'],
    ['audio', bytes('<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>'), 'audio/wav', 'the result is not audio: its bytes are an XML or HTML document, Content-Type audio/wav'],
    ['audio', bytes('{"message":"Server Error"}'), 'application/json', 'the result is not audio: its bytes are a JSON document, Content-Type application/json'],
    ['audio', Buffer.alloc(0), 'audio/mpeg', 'the result is not audio: its bytes are an empty file, Content-Type audio/mpeg'],
    ['audio', bytes('Service Unavailable\n'), undefined, 'the result is not audio: its bytes are plain text'],
    ['audio', mp4StandIn().subarray(0, 2).fill(0x00), 'video/mp4', 'the result is not audio: its bytes match no known audio format, Content-Type video/mp4'],
    ['video', wavTone(), 'audio/wav', 'the result is not video: its bytes are WAV, Content-Type audio/wav'],
    ['video', bytes('<html><head><title>502 Bad Gateway</title></head></html>'), 'video/mp4', 'the result is not video: its bytes are an HTML page, Content-Type video/mp4'],
  ] as const)('%s: a mismatch says what came instead', (type, head, contentType, reason) => {
    expect(resultMismatch(type, head, contentType)).toBe(reason);
  });

  it('takes Content-Type as a hint only for binary bytes of a format it does not know', () => {
    const unknownBinary = bytes([0x00, 0x01, 0x02, 0x9c, 0xfe]);
    expect(resultMismatch('audio', unknownBinary, 'audio/x-some-codec')).toBeUndefined();
    expect(resultMismatch('audio', unknownBinary, 'application/octet-stream')).toMatch(/match no known audio format/);
    expect(resultMismatch('audio', bytes('<!doctype html>'), 'audio/mpeg')).toMatch(/an HTML page/);
  });
});
