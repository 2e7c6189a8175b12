/** One benchmark figure as one JSON line on stdout: `{"metric":…,"value":…,"unit":…}`. */
export function metric(name: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ metric: name, value: Math.round(value * 100) / 100, unit, ...extra })}\n`);
}

/** Progress and context go to stderr so stdout stays parseable. */
export const note = (msg: string): void => {
  process.stderr.write(`[bench] ${msg}\n`);
};

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}
