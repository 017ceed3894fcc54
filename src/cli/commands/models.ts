import { catalogueTypesOf, JOB_TYPES, serves, type JobType } from '../../jobs/index.js';
import type { Argv } from 'yargs';
import type { Model } from '../../api/types.js';
import type { ModelsDocument } from '../../report/document-schemas.js';
import { escapeControlChars } from '../../control-chars.js';
import { withSharedOptions } from '../options.js';
import { writeJsonDocument, writeStdout } from '../output.js';
import { openService } from '../session.js';

export function builder(y: Argv) {
  return withSharedOptions(y).option('type', { choices: JOB_TYPES, describe: 'only models of this type' });
}

type ModelsArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: ModelsArgs): Promise<number> {
  const service = await openService(args, process.env);
  try {
    const types: readonly JobType[] = args.type === undefined ? JOB_TYPES : [args.type];
    const listed = await service.client.listModels({ types: catalogueTypesOf(types) });
    const models = listed.filter((m) => types.some((t) => serves(m, t)));
    if (args.json) await writeJsonDocument({ models: models.map(modelJson) });
    else await writeStdout(formatModels(models));
    return 0;
  } finally {
    await service.close();
  }
}

/** A model in the `models --json` document: the client's names back in snake_case. */
function modelJson(model: Model): ModelsDocument['models'][number] {
  const limits = Object.fromEntries(Object.entries(model.limits).filter((entry): entry is [string, number] => entry[1] !== undefined));
  return {
    slug: model.slug,
    name: model.name,
    inference_types: model.inferenceTypes,
    limits,
    features: model.features,
    defaults: model.defaults,
    languages: model.languages.map((lang) => ({ slug: lang.slug, name: lang.name, voices: lang.voices.map((voice) => ({ ...voice })) })),
    loras: model.loras,
    status: model.status,
  };
}

export function formatModels(models: readonly Model[]): string {
  if (models.length === 0) return 'No models of that type on this account.';
  const blocks = models.map((model) => {
    const lines = [`${model.slug}  (${model.inferenceTypes.join(', ')})${model.name !== model.slug ? `  "${model.name}"` : ''}`];
    const limits = Object.entries(model.limits)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${v}`);
    if (limits.length > 0) lines.push(`  limits: ${limits.join(' ')}`);
    if (model.features['supports_last_frame'] === true) lines.push('  supports last_frame_image');
    for (const lang of model.languages) {
      const voices = lang.voices.map((v) => v.slug).join(', ');
      lines.push(`  ${lang.slug}${lang.name !== lang.slug ? ` (${lang.name})` : ''}: ${voices || '(no voices listed)'}`);
    }
    // Each line is made of the service's names: escaped before they reach the terminal.
    return lines.map(escapeControlChars).join('\n');
  });
  return `${blocks.join('\n\n')}\n\n${models.length} model(s).`;
}
