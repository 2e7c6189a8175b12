import { describe, expect, it } from 'vitest';
import { formatEuros, perPersonCents } from '../src/split';

describe('splitting', () => {
  it('without a tip shares the bill, rounding each share up to the cent', () => {
    expect(perPersonCents(9000, 0, 3)).toBe(3000);
    expect(perPersonCents(1000, 0, 3)).toBe(334);
  });
  it('refuses nobody and negative amounts', () => {
    expect(() => perPersonCents(1000, 0, 0)).toThrow(RangeError);
    expect(() => perPersonCents(-1, 0, 2)).toThrow(RangeError);
  });
  it('formats cents as euros', () => {
    expect(formatEuros(2300)).toBe('€23.00');
  });
});
