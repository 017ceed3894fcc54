/** The speech jobs both the runner and the bare loop send: three voices, all-different texts. */
export const VOICES = ['af_sky', 'af_bella', 'am_adam'] as const;

export function benchText(i: number): string {
  return `Sentence number ${i} ${'la '.repeat(i % 50)}end.`;
}
