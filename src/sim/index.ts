/** The simulator of the service (docs/commands.md, "The simulator"): start it, point a client at it, read its stats. */
export { startSimulator, type Simulator } from './server.js';
export type { SimOptions } from './options.js';
export { parseFaultSpec } from './faults.js';
export type { SimStats } from './jobs.js';
