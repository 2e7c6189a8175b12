/** Discord's epoch (2015-01-01T00:00:00Z): snowflake timestamps count milliseconds from here. */
export const DISCORD_EPOCH = 1420070400000n;

/**
 * Mints strictly increasing snowflakes from the wall clock, shaped like Discord's
 * (timestamp << 22 | worker << 17 | process << 12 | increment). Clients bucket rate limits and
 * page history on these ids, so they must sort numerically by creation time.
 */
export class SnowflakeMint {
  private lastMs = 0n;
  private increment = 0n;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly worker = 1n,
    private readonly process = 7n,
  ) {}

  next(): string {
    let ms = BigInt(this.now());
    if (ms < this.lastMs) ms = this.lastMs;
    if (ms === this.lastMs) {
      this.increment += 1n;
      if (this.increment > 0xfffn) {
        ms += 1n;
        this.increment = 0n;
      }
    } else {
      this.increment = 0n;
    }
    this.lastMs = ms;
    return (
      ((ms - DISCORD_EPOCH) << 22n) |
      (this.worker << 17n) |
      (this.process << 12n) |
      this.increment
    ).toString();
  }
}

export const snowflakeTime = (id: string): Date => new Date(Number((BigInt(id) >> 22n) + DISCORD_EPOCH));

/**
 * A time as Discord writes message timestamps: ISO8601 with microseconds and a `+00:00` offset,
 * e.g. `2017-07-11T17:27:07.299000+00:00` (the Message resource's examples).
 */
export const discordTimestamp = (at: Date): string => at.toISOString().replace(/Z$/, '000+00:00');

export const compareSnowflakes = (a: string, b: string): number => {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

export const isSnowflake = (s: string): boolean => /^\d{1,20}$/.test(s);
