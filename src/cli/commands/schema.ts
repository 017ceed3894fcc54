import { manifestJsonSchema } from '../../manifest/schema.js';
import { writeJson } from '../output.js';

export async function handler(): Promise<number> {
  await writeJson(manifestJsonSchema());
  return 0;
}
