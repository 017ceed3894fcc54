/**
 * mediabatch as a library: `validate`, `estimate` and `run` over the same engine, ledger,
 * guarantees and errors as the CLI (which is a layer over these), options named as its flags.
 * Nothing here prints, exits the process or reads the environment or the command line.
 * docs/library.md says the rest.
 */
export { validate, estimate, run, type RunHandle, type RunSummary } from './calls.js';
export type { EstimateOptions, RunOptions, ServiceOptions, ValidateOptions } from './call-options.js';
export type { JobObject, ManifestInput, ManifestObject } from './manifest-input.js';
export type { RunEvent, RunPlan, RunResult, RunOutcome, StatusSummary, PlanChoice } from '../runner/index.js';
export type { CostReport, CostReportJob } from '../pricing/report.js';
export type { JobType } from '../jobs/index.js';
export type { JobState } from '../jobs/states.js';
export { startSimulator, type Simulator, type SimOptions, type SimStats } from '../sim/index.js';
export { ExitCode, MediabatchError, UsageError, ConfigError, LocalIoError, type ExitCodeValue } from '../errors.js';
export { ManifestError, type ManifestIssue } from '../manifest/errors.js';
export { BudgetError, FatalRunError } from '../runner/run-errors.js';
export { ApiError, AuthError, ValidationError, RateLimitError, NetworkError, ServerError } from '../api/errors.js';
export { LedgerLockedError } from '../store/index.js';
export { microToUsd } from '../money.js';
