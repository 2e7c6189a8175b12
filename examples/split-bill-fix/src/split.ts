/** What each person pays, in cents, for a bill with a tip split evenly. */
export function perPersonCents(billCents: number, tipPercent: number, people: number): number {
  if (!Number.isInteger(people) || people < 1) throw new RangeError('people must be a whole number ≥ 1');
  if (billCents < 0 || tipPercent < 0) throw new RangeError('bill and tip must not be negative');
  // In integers: (bill × (100 + tip)) / (100 × people), rounded up to the cent, with no float error.
  return Math.ceil((billCents * (100 + tipPercent)) / (100 * people));
}

export function formatEuros(cents: number): string {
  return `€${(cents / 100).toFixed(2)}`;
}
