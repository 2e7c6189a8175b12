import { minSnowflake, pageStep, snowflakeAt, snowflakeBefore } from './delta.paging';

describe('delta paging', () => {
  it('orders a newest-first page oldest-first and continues after its largest id while pages are full', () => {
    const page = [
      { id: '1000000000000000030' },
      { id: '1000000000000000020' },
      { id: '1000000000000000010' },
    ];
    expect(pageStep(page, 3)).toEqual({ oldestFirst: [...page].reverse(), nextAfter: '1000000000000000030' });
    expect(pageStep(page, 100).nextAfter).toBeNull();
    expect(pageStep([], 100)).toEqual({ oldestFirst: [], nextAfter: null });
  });

  it('compares ids as numbers, not strings', () => {
    const page = [{ id: '99' }, { id: '100' }];
    expect(pageStep(page, 2).nextAfter).toBe('100');
    expect(minSnowflake('99', '100')).toBe('99');
    expect(snowflakeBefore('100')).toBe('99');
  });

  it('turns a time into the first snowflake of that millisecond', () => {
    const t = Date.parse('2026-11-29T00:00:00Z');
    const id = BigInt(snowflakeAt(t));
    expect(Number((id >> 22n) + 1_420_070_400_000n)).toBe(t);
    expect(id & ((1n << 22n) - 1n)).toBe(0n);
  });
});
