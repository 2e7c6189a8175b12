/** Discord's epoch (2015-01-01) in ms: a snowflake's top bits are milliseconds since it. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/** The smallest snowflake at a time: `after` it means "everything from then on". */
export const snowflakeAt = (ms: number): string =>
  ((BigInt(Math.max(0, Math.floor(ms))) - DISCORD_EPOCH) << 22n).toString();

export const snowflakeBefore = (id: string): string => (BigInt(id) - 1n).toString();

export const minSnowflake = (a: string, b: string): string => (BigInt(a) <= BigInt(b) ? a : b);

export interface PageStep<M extends { id: string }> {
  /** This page's messages, oldest first: the order intake records them in. */
  oldestFirst: M[];
  /** The next `after`, or null when this was the last page. */
  nextAfter: string | null;
}

/**
 * Discord answers `after=X` newest → oldest. The next page starts after the first (largest) id;
 * a page shorter than the limit is the last one.
 */
export function pageStep<M extends { id: string }>(page: readonly M[], limit: number): PageStep<M> {
  const oldestFirst = [...page].sort((a, b) =>
    BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0,
  );
  const newest = oldestFirst[oldestFirst.length - 1];
  return { oldestFirst, nextAfter: page.length >= limit && newest ? newest.id : null };
}
