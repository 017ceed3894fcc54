import { manifestJsonSchema } from '../../manifest/schema.js';
import { writeStdout } from '../output.js';

export async function handler(): Promise<number> {
  await writeStdout(JSON.stringify(manifestJsonSchema(), null, 2));
  return 0;
}
