import { JOB_KINDS, JOB_TYPES, type JobKind } from '../jobs/index.js';

type Json = Record<string, unknown>;

/**
 * The jobs of the manifest's JSON Schema made as strict as the validator (load.ts), with one
 * error for one mistake, so an editor says what `mediabatch validate` would:
 * - a job is matched to its kind by `if`/`then` on `type`, not by trying every kind (`oneOf`),
 *   which reported a wrong field once per kind;
 * - each kind's `then` allows only that kind's fields and requires what only a job can give:
 *   `text` or `text_file` (exactly one, `oneOf`) for speech, the prompt, the first frame image;
 * - a field `defaults.<type>` may supply (model, voice, size …) is required on a job exactly when
 *   the manifest's defaults for that type do not give it: a condition on the whole document,
 *   at its root, since a job alone cannot see the defaults.
 * What a schema cannot know stays the validator's: files on disk, unique ids, the catalogue.
 * `generated` is zod's JSON Schema of the manifest (schema.ts), whose jobs are a union of kinds.
 */
export function withStrictJobs(generated: Json): Json {
  const properties = generated['properties'] as Json;
  const jobs = properties['jobs'] as Json;
  const items = jobs['items'] as { oneOf?: Json[]; anyOf?: Json[] };
  const branches = new Map((items.oneOf ?? items.anyOf ?? []).map((branch) => [typeOf(branch), branch]));
  const requiredByDefaults = JOB_KINDS.flatMap(requiredUnlessDefaulted);
  return {
    ...generated,
    properties: { ...properties, jobs: { ...jobs, items: jobItems(branches) } },
    allOf: [...((generated['allOf'] as Json[] | undefined) ?? []), ...requiredByDefaults],
  };
}

function typeOf(branch: Json): unknown {
  return ((branch['properties'] as Json)['type'] as Json)['const'];
}

/**
 * Matches a job of one kind. Anything else (no `type`, an unknown one, not a mapping at all) is
 * reported for that alone: `required` and `properties` pass a value that is not an object, so
 * without `type: object` every kind's rules would apply to it at once.
 */
function isKind(kind: JobKind): Json {
  return { type: 'object', required: ['type'], properties: { type: { const: kind.type } } };
}

function jobItems(branches: Map<unknown, Json>): Json {
  return {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: [...JOB_TYPES], description: 'What to generate' } },
    allOf: JOB_KINDS.map((kind) => ({ if: isKind(kind), then: kindSchema(kind, branches.get(kind.type)) })),
  };
}

/** One kind's fields (only these), with what only the job itself can give required. */
function kindSchema(kind: JobKind, branch: Json | undefined): Json {
  // Every kind is a branch of zod's union; one missing would be a bug in schema.ts.
  if (branch === undefined) throw new Error(`the manifest schema has no branch for ${kind.type}`);
  const ownRequired = kind.required.filter((field) => field in kind.content);
  const pair = kind.exactlyOne;
  return {
    ...branch,
    required: [...((branch['required'] as string[] | undefined) ?? []), ...ownRequired],
    ...(pair === undefined ? {} : { oneOf: pair.map((field) => ({ required: [field] })) }),
  };
}

/** For each field a kind requires that defaults may give: required on its jobs unless defaults give it. */
function requiredUnlessDefaulted(kind: JobKind): Json[] {
  return kind.required
    .filter((field) => field in kind.params)
    .map((field) => ({
      if: { not: { required: ['defaults'], properties: { defaults: { required: [kind.type], properties: { [kind.type]: { required: [field] } } } } } },
      then: { properties: { jobs: { items: { if: isKind(kind), then: { required: [field] } } } } },
    }));
}
