/** The job endpoints the simulator serves, as the service names them. */
export const SIM_JOB_TYPES = ['txt2audio', 'img2video', 'txt2img', 'txt2video'] as const;
export type SimJobType = (typeof SIM_JOB_TYPES)[number];
