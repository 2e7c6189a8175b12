import { DISCORD_EPOCH, SnowflakeMint, compareSnowflakes, snowflakeTime } from './snowflake';

describe('SnowflakeMint', () => {
  it('mints strictly increasing ids that carry their creation time, even within one millisecond', () => {
    const at = 1_760_000_000_000;
    const mint = new SnowflakeMint(() => at);
    const ids = Array.from({ length: 5000 }, () => mint.next());
    for (let i = 1; i < ids.length; i++)
      expect(compareSnowflakes(ids[i - 1] as string, ids[i] as string)).toBe(-1);
    expect(snowflakeTime(ids[0] as string).getTime()).toBe(at);
    expect(snowflakeTime(ids[4999] as string).getTime()).toBe(at + 1);
    expect(BigInt(ids[0] as string) >> 22n).toBe(BigInt(at) - DISCORD_EPOCH);
  });
});
