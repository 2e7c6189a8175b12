/**
 * Interval estimates for the figures the evaluation and `caseloop … replay` print. A precision of
 * 0.95 over 20 links and over 2 000 links are different claims; the interval says which one it is.
 */

export interface Proportion {
  /** successes / trials, or null when there were no trials (nothing to estimate). */
  value: number | null;
  successes: number;
  trials: number;
  /** 95 % Wilson score interval; [0, 1] when there were no trials. */
  low: number;
  high: number;
}

const Z95 = 1.959963984540054;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Wilson score interval: well-behaved at 0 and 1 and for small n, unlike the normal approximation. */
export function wilson(successes: number, trials: number, z = Z95): Proportion {
  if (!Number.isInteger(successes) || !Number.isInteger(trials) || successes < 0 || successes > trials)
    throw new RangeError(`wilson: need 0 <= successes (${successes}) <= trials (${trials})`);
  if (trials === 0) return { value: null, successes, trials, low: 0, high: 1 };
  const p = successes / trials;
  const z2 = z * z;
  const denom = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denom;
  return {
    value: r3(p),
    successes,
    trials,
    low: r3(Math.max(0, centre - half)),
    high: r3(Math.min(1, centre + half)),
  };
}

/** `0.912 [0.851, 0.950] (62/68)`; `n/a (0/0)` when nothing was measured. */
export function formatProportion(p: Proportion): string {
  if (p.value === null) return `n/a (0/0)`;
  return `${p.value.toFixed(3)} [${p.low.toFixed(3)}, ${p.high.toFixed(3)}] (${p.successes}/${p.trials})`;
}

/**
 * The evaluation split of a named unit (a channel, a product): FNV-1a of the name, 40 % held out.
 * Fixed before any tuning, so a held-out figure is what a new team would see on its own history.
 */
export function heldOutSplit(name: string): 'tune' | 'heldout' {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % 10 < 4 ? 'heldout' : 'tune';
}
