export interface LeaseSettings {
  namespace: string;
  bucket: string;
  /** Clock-skew margin: a lapsed lease is taken over only this long after its recorded expiry. */
  skewMs: number;
  /** How often every known resource is looked at for lapsed leases and waiters to serve. */
  sweepIntervalMs: number;
  /** How long a requester has to claim a grant before it is released as unused. */
  claimMs: number;
  /** KV history kept per key (for inspection; decisions read only the latest). */
  history: number;
}

export const LEASE_SETTINGS = Symbol('LEASE_SETTINGS');
/** Epoch milliseconds. A provider, so tests can pin time; deciders get it as a value. */
export const LEASE_CLOCK = Symbol('LEASE_CLOCK');
export type Clock = () => number;
