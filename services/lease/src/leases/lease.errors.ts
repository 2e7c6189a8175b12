/** Compare-and-set attempts before an operation gives up as `unavailable` (only under pathological contention). */
export const MAX_ATTEMPTS = 50;

export class LeaseUnavailable extends Error {
  override readonly name = 'LeaseUnavailable';
}
