import { describe, expect, test } from 'vitest';
import { ManifestError } from '../../src/manifest/errors.js';
import { FIXTURES, messageOf, rejection } from './helpers.js';

const invalid = (name: string) => messageOf(`${FIXTURES}/invalid/${name}.yaml`);

describe('one kind of mistake per fixture, every message in full', () => {
  test('YAML syntax error, with its position', async () => {
    expect(await invalid('syntax-error')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/syntax-error.yaml:6:1 YAML syntax: Missing closing "quote
      1 problem in test/fixtures/manifests/invalid/syntax-error.yaml; nothing was sent."
    `);
  });
  test('two YAML documents in one file', async () => {
    expect(await invalid('two-documents')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/two-documents.yaml:5:1 YAML syntax: expected one document (a manifest is one), got a second one starting on line 5; keep one manifest per file
      1 problem in test/fixtures/manifests/invalid/two-documents.yaml; nothing was sent."
    `);
  });
  test('duplicate key', async () => {
    expect(await invalid('duplicate-key')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/duplicate-key.yaml:7:5 YAML syntax: Map keys must be unique
      1 problem in test/fixtures/manifests/invalid/duplicate-key.yaml; nothing was sent."
    `);
  });
  test('empty file', async () => {
    expect(await invalid('empty-file')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/empty-file.yaml:1:1 expected a mapping with version and jobs, got an empty file
      1 problem in test/fixtures/manifests/invalid/empty-file.yaml; nothing was sent."
    `);
  });
  test('manifest not UTF-8', async () => {
    expect(await invalid('not-utf8')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/not-utf8.yaml:1:1 expected a UTF-8 text file, got bytes that are not UTF-8; save the file as UTF-8
      1 problem in test/fixtures/manifests/invalid/not-utf8.yaml; nothing was sent."
    `);
  });
  test('empty job list', async () => {
    expect(await invalid('empty-jobs')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/empty-jobs.yaml:2:7 jobs: expected at least one job, got []
      1 problem in test/fixtures/manifests/invalid/empty-jobs.yaml; nothing was sent."
    `);
  });
  test('version missing', async () => {
    expect(await invalid('version-missing')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/version-missing.yaml:1:1 version: expected 1, got nothing
      1 problem in test/fixtures/manifests/invalid/version-missing.yaml; nothing was sent."
    `);
  });
  test('version not 1', async () => {
    expect(await invalid('version-wrong')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/version-wrong.yaml:1:10 version: expected 1, got 2
      1 problem in test/fixtures/manifests/invalid/version-wrong.yaml; nothing was sent."
    `);
  });
  test('negative budget', async () => {
    expect(await invalid('budget-negative')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/budget-negative.yaml:2:9 budget: expected a number of USD, 0 or more, got -5
      1 problem in test/fixtures/manifests/invalid/budget-negative.yaml; nothing was sent."
    `);
  });
  test('budget as a quoted string', async () => {
    expect(await invalid('budget-quoted')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/budget-quoted.yaml:2:9 budget: expected a number of USD, 0 or more, got "25.00"; write the number without quotes
      1 problem in test/fixtures/manifests/invalid/budget-quoted.yaml; nothing was sent."
    `);
  });
  test('unknown keys at every level, with suggestions', async () => {
    expect(await invalid('unknown-keys')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/unknown-keys.yaml:2:1 budgett: unknown field; did you mean "budget"?
      test/fixtures/manifests/invalid/unknown-keys.yaml:11:5 defaults.txt2audio.text: unknown field; text belongs on each job, not in defaults
      test/fixtures/manifests/invalid/unknown-keys.yaml:12:3 defaults.video: unknown field; did you mean "img2video"?
      test/fixtures/manifests/invalid/unknown-keys.yaml:17:5 job "typo" (#1) voise: unknown field; did you mean "voice"?
      test/fixtures/manifests/invalid/unknown-keys.yaml:21:5 job "stranger" (#2) webhook_url: unknown field; allowed here: id, type, tags, split, text, text_file, ref_audio, model, mode, voice, lang, speed, format, sample_rate, ref_text, instruct
      5 problems in test/fixtures/manifests/invalid/unknown-keys.yaml; nothing was sent."
    `);
  });
  test('required fields missing after defaults', async () => {
    expect(await invalid('missing-fields')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/missing-fields.yaml:3:5 job "speech" (#1) voice: expected a voice slug, got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/missing-fields.yaml:3:5 job "speech" (#1) lang: expected a language slug, got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/missing-fields.yaml:3:5 job "speech" (#1) speed: expected a number above 0, got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/missing-fields.yaml:9:5 job "clip" (#2) prompt: expected non-empty text, got nothing; set it on the job
      test/fixtures/manifests/invalid/missing-fields.yaml:9:5 job "clip" (#2) first_frame_image: expected a path to a JPG, PNG, GIF, BMP or WebP image, got nothing; set it on the job
      test/fixtures/manifests/invalid/missing-fields.yaml:9:5 job "clip" (#2) guidance: expected a number, 0 or more, got nothing; set it on the job or in defaults.img2video
      test/fixtures/manifests/invalid/missing-fields.yaml:9:5 job "clip" (#2) seed: expected a whole number, 0 or more, got nothing; set it on the job or in defaults.img2video
      7 problems in test/fixtures/manifests/invalid/missing-fields.yaml; nothing was sent."
    `);
  });
  test('text and text_file: both, neither, blank text', async () => {
    expect(await invalid('text-source')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/text-source.yaml:8:16 job "both" (#1) text_file: expected text or text_file, got both
      test/fixtures/manifests/invalid/text-source.yaml:9:5 job "neither" (#2) text: expected text or text_file, got neither
      test/fixtures/manifests/invalid/text-source.yaml:13:11 job "blank" (#3) text: expected non-empty text, got "   "
      3 problems in test/fixtures/manifests/invalid/text-source.yaml; nothing was sent."
    `);
  });
  test('whole numbers, finite numbers, quoted numbers', async () => {
    expect(await invalid('numbers')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/numbers.yaml:9:18 job "rates" (#1) sample_rate: expected a whole number of Hz above 0, got 24000.5
      test/fixtures/manifests/invalid/numbers.yaml:10:12 job "rates" (#1) speed: expected a number above 0, got Infinity
      test/fixtures/manifests/invalid/numbers.yaml:15:12 job "sizes" (#2) width: expected a whole number above 0, got "768"; write the number without quotes
      test/fixtures/manifests/invalid/numbers.yaml:16:13 job "sizes" (#2) frames: expected a whole number above 0, got 60.5
      test/fixtures/manifests/invalid/numbers.yaml:17:11 job "sizes" (#2) seed: expected a whole number, 0 or more, got -1
      test/fixtures/manifests/invalid/numbers.yaml:18:15 job "sizes" (#2) guidance: expected a number, 0 or more, got NaN
      test/fixtures/manifests/invalid/numbers.yaml:19:12 job "sizes" (#2) steps: expected a whole number above 0, got 0
      7 problems in test/fixtures/manifests/invalid/numbers.yaml; nothing was sent."
    `);
  });
  test('text files: missing, a directory, not UTF-8, blank', async () => {
    expect(await invalid('text-files')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/text-files.yaml:7:16 job "missing" (#1) text_file: expected an existing file, got "assets/nope.txt" (no such file); paths are relative to the manifest's folder
      test/fixtures/manifests/invalid/text-files.yaml:10:16 job "directory" (#2) text_file: expected a regular file, got "assets/scripts.txt" (a directory)
      test/fixtures/manifests/invalid/text-files.yaml:13:16 job "latin1" (#3) text_file: expected UTF-8 text, got "assets/latin1.txt" (not valid UTF-8); save the file as UTF-8
      test/fixtures/manifests/invalid/text-files.yaml:16:16 job "blank" (#4) text_file: expected non-empty text, got "assets/blank.txt" (an empty file)
      4 problems in test/fixtures/manifests/invalid/text-files.yaml; nothing was sent."
    `);
  });
  test('images: missing, a directory, not an image by its bytes, empty', async () => {
    expect(await invalid('images')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/images.yaml:8:24 job "missing" (#1) first_frame_image: expected an existing file, got "assets/nope.png" (no such file); paths are relative to the manifest's folder
      test/fixtures/manifests/invalid/images.yaml:12:24 job "directory" (#2) first_frame_image: expected a regular file, got "assets/a-dir.png" (a directory)
      test/fixtures/manifests/invalid/images.yaml:16:24 job "not-an-image" (#3) first_frame_image: expected a JPG, PNG, GIF, BMP or WebP image, got "assets/fake.png" (not an image by its bytes)
      test/fixtures/manifests/invalid/images.yaml:21:23 job "empty" (#4) last_frame_image: expected a JPG, PNG, GIF, BMP or WebP image, got "assets/empty.gif" (an empty file)
      4 problems in test/fixtures/manifests/invalid/images.yaml; nothing was sent."
    `);
  });
  test('ids: bad characters, "..", too long, duplicates, duplicates by case, not a string', async () => {
    expect(await invalid('ids')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/ids.yaml:5:9 job "has space" (#1) id: expected an id of letters, digits, ".", "_" or "-", at most 128 characters, not "." or "..", got "has space"
      test/fixtures/manifests/invalid/ids.yaml:8:9 job ".." (#2) id: expected an id of letters, digits, ".", "_" or "-", at most 128 characters, not "." or "..", got ".."
      test/fixtures/manifests/invalid/ids.yaml:11:9 job "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" (#3) id: expected an id of letters, digits, ".", "_" or "-", at most 128 characters, not "." or "..", got "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…
      test/fixtures/manifests/invalid/ids.yaml:17:9 job "intro" (#5) id: expected a unique id, got "intro" (also the id of the job at test/fixtures/manifests/invalid/ids.yaml:14:5)
      test/fixtures/manifests/invalid/ids.yaml:20:9 job "Intro" (#6) id: expected a unique id, got "Intro" (the job at test/fixtures/manifests/invalid/ids.yaml:14:5 has "intro"); ids become file names, and some file systems ignore case
      test/fixtures/manifests/invalid/ids.yaml:23:9 job (#7) id: expected an id of letters, digits, ".", "_" or "-", at most 128 characters, not "." or "..", got 42
      6 problems in test/fixtures/manifests/invalid/ids.yaml; nothing was sent."
    `);
  });
  test('two jobs without ids and the same content', async () => {
    expect(await invalid('derived-duplicate')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/derived-duplicate.yaml:9:5 job "txt2audio-fc714c14393e415c" (#3) id: expected a unique id, got "txt2audio-fc714c14393e415c" (derived; the job at test/fixtures/manifests/invalid/derived-duplicate.yaml:5:5 has identical content); give these jobs ids of their own if both should run
      1 problem in test/fixtures/manifests/invalid/derived-duplicate.yaml; nothing was sent."
    `);
  });
  test('jobs that are not jobs: wrong type, no type, a string, nothing', async () => {
    expect(await invalid('job-shapes')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/job-shapes.yaml:5:11 job (#1) type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img", got "txt2poetry"
      test/fixtures/manifests/invalid/job-shapes.yaml:7:5 job (#2) type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img", got nothing
      test/fixtures/manifests/invalid/job-shapes.yaml:8:5 job (#3) expected a mapping with type and the fields of a job, got "just a string"
      test/fixtures/manifests/invalid/job-shapes.yaml:9:4 job (#4) expected a mapping with type and the fields of a job, got null
      4 problems in test/fixtures/manifests/invalid/job-shapes.yaml; nothing was sent."
    `);
  });
  test('invalid defaults are reported once, not once per job', async () => {
    expect(await invalid('defaults-invalid')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/defaults-invalid.yaml:3:66 defaults.txt2audio.speed: expected a number above 0, got "fast"
      test/fixtures/manifests/invalid/defaults-invalid.yaml:3:80 defaults.txt2audio.format: expected one of "mp3", "wav", "flac", got "mp4"
      2 problems in test/fixtures/manifests/invalid/defaults-invalid.yaml; nothing was sent."
    `);
  });
  test('many problems in one file, all reported, sorted by position', async () => {
    expect(await invalid('many-problems')).toMatchInlineSnapshot(`
      "test/fixtures/manifests/invalid/many-problems.yaml:1:10 version: expected 1, got 3
      test/fixtures/manifests/invalid/many-problems.yaml:2:9 budget: expected a number of USD, 0 or more, got "lots"
      test/fixtures/manifests/invalid/many-problems.yaml:6:5 job "ok-speech" (#1) model: expected a model slug, got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/many-problems.yaml:6:5 job "ok-speech" (#1) voice: expected a voice slug, got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/many-problems.yaml:6:5 job "ok-speech" (#1) lang: expected a language slug, got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/many-problems.yaml:6:5 job "ok-speech" (#1) speed: expected a number above 0, got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/many-problems.yaml:6:5 job "ok-speech" (#1) format: expected one of "mp3", "wav", "flac", got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/many-problems.yaml:6:5 job "ok-speech" (#1) sample_rate: expected a whole number of Hz above 0, got nothing; set it on the job or in defaults.txt2audio
      test/fixtures/manifests/invalid/many-problems.yaml:11:13 job "waves" (#2) prompt: expected non-empty text, got ""
      test/fixtures/manifests/invalid/many-problems.yaml:12:24 job "waves" (#2) first_frame_image: expected a JPG, PNG, GIF, BMP or WebP image, got "assets/fake.png" (not an image by its bytes)
      test/fixtures/manifests/invalid/many-problems.yaml:13:13 job "waves" (#2) frames: expected a whole number above 0, got 240.5
      test/fixtures/manifests/invalid/many-problems.yaml:14:5 job "waves" (#2) colour: unknown field; allowed here: id, type, tags, prompt, first_frame_image, last_frame_image, model, width, height, steps, frames, fps, guidance, seed, negative_prompt
      test/fixtures/manifests/invalid/many-problems.yaml:15:9 job "waves" (#3) id: expected a unique id, got "waves" (also the id of the job at test/fixtures/manifests/invalid/many-problems.yaml:9:5)
      13 problems in test/fixtures/manifests/invalid/many-problems.yaml; nothing was sent."
    `);
  });
});

describe('the error itself', () => {
  test('is a ManifestError with exit code 2 and structured issues', async () => {
    const error = await rejection(`${FIXTURES}/invalid/numbers.yaml`);
    expect(error).toBeInstanceOf(ManifestError);
    expect(error.code).toBe('E_MANIFEST');
    expect(error.exitCode).toBe(2);
    expect(error.issues[0]).toMatchInlineSnapshot(`
      {
        "col": 18,
        "expected": "a whole number of Hz above 0",
        "field": "sample_rate",
        "file": "test/fixtures/manifests/invalid/numbers.yaml",
        "got": "24000.5",
        "jobId": "rates",
        "jobIndex": 0,
        "line": 9,
        "message": "expected a whole number of Hz above 0, got 24000.5",
      }
    `);
  });
});
