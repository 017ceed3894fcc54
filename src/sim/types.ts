/** The job endpoints the simulator serves, as the service names them. */
export type SimJobType = 'txt2audio' | 'img2video';
