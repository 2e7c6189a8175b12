import { describe, expect, it } from 'vitest';
import { perPersonCents } from '../src/split';

describe('the tip', () => {
  it('is a percentage of the bill', () => {
    expect(perPersonCents(8000, 15, 4)).toBe(2300);
    expect(perPersonCents(5000, 10, 1)).toBe(5500);
  });
});
