import { loadavg } from 'node:os';

/**
 * One benchmark figure as one JSON line on stdout: `{"metric":…,"value":…,"unit":…}`. The machine's
 * 1-minute load rides along: on a shared 2-core machine it explains much of a figure.
 */
export function metric(name: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  const load1 = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  process.stdout.write(
    `${JSON.stringify({ metric: name, value: Math.round(value * 100) / 100, unit, ...extra, load1 })}\n`,
  );
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
