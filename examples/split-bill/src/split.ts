/** What each person pays, in cents, for a bill with a tip split evenly. */
export function perPersonCents(billCents: number, tipPercent: number, people: number): number {
  if (!Number.isInteger(people) || people < 1) throw new RangeError('people must be a whole number ≥ 1');
  if (billCents < 0 || tipPercent < 0) throw new RangeError('bill and tip must not be negative');
  const withTip = billCents + tipPercent * 100;
  return Math.ceil(withTip / people);
}

export function formatEuros(cents: number): string {
  return `€${(cents / 100).toFixed(2)}`;
}
