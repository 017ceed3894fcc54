import type { CommandModule } from 'yargs';
import { manifestJsonSchema } from '../../manifest/schema.js';
import type { CommandResult } from '../main.js';
import { writeJson } from '../output.js';

export function schemaCommand(result: CommandResult): CommandModule {
  return {
    command: 'schema',
    describe: "print the manifest's JSON Schema (for editor completion)",
    handler: async () => {
      await writeJson(manifestJsonSchema());
      result.exitCode = 0;
    },
  };
}
