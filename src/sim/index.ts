/** The simulator of the service (docs/commands.md, "The simulator"): start it, point a client at it, read its stats. */
export { startSimulator, type Simulator } from './server.js';
export type { SimOptions } from './options.js';
export { parseFaultSpec, FAULT_KINDS, FAULT_SCOPES, type FaultSpec, type FaultKind, type FaultScope } from './faults.js';
export type { SimStats, AcceptedJob, CallKind } from './stats.js';
export type { PricingMode } from './pricing.js';
