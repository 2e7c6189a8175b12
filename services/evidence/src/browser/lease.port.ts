/**
 * What client validation needs from the shared-client lease. The lease service owns grants,
 * fencing tokens and expiry; this is the narrow surface the browser phase drives.
 */
export interface LeaseRequest {
  resource: string;
  caseId: string;
  taskId: string;
  revision: string;
  /** How long a grant lives without renewal. */
  ttlMs: number;
  /** How long to queue for the resource before giving up. */
  waitMs: number;
}

/** `expired`: our grant ran out; `foreign`: someone else holds the resource now. */
export type LeaseStanding = 'held' | 'expired' | 'foreign';

export interface HeldLease {
  readonly resource: string;
  /** The fencing token: every capture taken under this grant carries it. */
  readonly token: number;
  /**
   * A call on this grant could not reach the lease service (or NATS) at some point: a loss of the
   * grant after that is the outage's doing, not the flow's, and worth one more run.
   */
  readonly interrupted: boolean;
  /** Epoch milliseconds of the recorded expiry. */
  expiresAt(): number;
  check(): Promise<LeaseStanding>;
  /** Extends the grant; resolves to the standing after the attempt. */
  renew(): Promise<LeaseStanding>;
  /** Records a capture id on the grant; answers whether the grant still stood when it was bound. */
  bindCapture(captureId: string): Promise<LeaseStanding>;
  release(captureIds: string[]): Promise<void>;
}

export class LeaseUnavailableError extends Error {
  constructor(
    readonly reason: 'queue_timeout' | 'refused' | 'unreachable',
    message: string,
  ) {
    super(message);
    this.name = 'LeaseUnavailableError';
  }
}

export interface LeasePort {
  /** Waits in line (first come, first served) up to `waitMs`; throws LeaseUnavailableError otherwise. */
  acquire(request: LeaseRequest): Promise<HeldLease>;
}
