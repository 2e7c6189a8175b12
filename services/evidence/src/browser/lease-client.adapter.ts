import { Lease, LeaseCheck, LeaseClient, LeaseError } from '@caseloop/lease-client';
import { NatsError } from 'nats';
import { HeldLease, LeasePort, LeaseRequest, LeaseStanding, LeaseUnavailableError } from './lease.port';

/** A grant that is no longer ours: expired is its own kind; released or taken over is foreign. */
const standingOf = (c: LeaseCheck): LeaseStanding =>
  c.holder ? 'held' : c.standing === 'expired' ? 'expired' : 'foreign';

/** The lease service (restarting) or NATS did not answer: worth asking again, not a verdict on the grant. */
const transient = (e: unknown): boolean =>
  e instanceof LeaseError ? e.code === 'unavailable' : e instanceof NatsError;

export interface HeldGrantTiming {
  now: () => number;
  /** Pause between two attempts of a call that met a transient error. */
  retryPauseMs: number;
}

const DEFAULT_TIMING: HeldGrantTiming = { now: Date.now, retryPauseMs: 250 };

class HeldGrant implements HeldLease {
  private unreachable = false;

  constructor(
    private readonly lease: Lease,
    private readonly timing: HeldGrantTiming,
  ) {}
  get resource(): string {
    return this.lease.resource;
  }
  get token(): number {
    return this.lease.token;
  }
  get interrupted(): boolean {
    return this.unreachable;
  }
  expiresAt(): number {
    return this.lease.expiresAt;
  }
  check(): Promise<LeaseStanding> {
    return this.untilExpiry(() => this.lease.check());
  }
  renew(): Promise<LeaseStanding> {
    return this.untilExpiry(() => this.lease.renew());
  }
  bindCapture(captureId: string): Promise<LeaseStanding> {
    return this.untilExpiry(() => this.lease.bindCapture(captureId));
  }
  async release(captureIds: string[]): Promise<void> {
    await this.lease.release(captureIds);
  }

  /**
   * A lease service that is restarting (or a NATS hiccup) is no answer about the grant: ask again
   * until the grant's own recorded expiry. Past it without an answer, the grant counts as expired.
   */
  private async untilExpiry(call: () => Promise<LeaseCheck>): Promise<LeaseStanding> {
    for (;;) {
      try {
        return standingOf(await call());
      } catch (e) {
        if (!transient(e)) throw e;
        this.unreachable = true;
        if (this.timing.now() >= this.lease.expiresAt) return 'expired';
        await new Promise((r) => setTimeout(r, this.timing.retryPauseMs));
      }
    }
  }
}

/**
 * The lease service's client as the browser phase sees it. Binding to the lease bucket waits for
 * the first acquisition, so the evidence service boots before the lease service has created it.
 */
export class LeaseClientAdapter implements LeasePort {
  private client: Promise<LeaseClient> | null = null;

  constructor(
    private readonly connect: () => Promise<LeaseClient>,
    private readonly timing: HeldGrantTiming = DEFAULT_TIMING,
  ) {}

  async acquire(request: LeaseRequest): Promise<HeldLease> {
    try {
      this.client ??= this.connect().catch((e: unknown) => {
        this.client = null;
        throw new LeaseUnavailableError(
          'unreachable',
          `the lease bucket is not available: ${(e as Error).message}`,
        );
      });
      const lease = await (
        await this.client
      ).acquire({
        resource: request.resource,
        caseId: request.caseId,
        taskId: request.taskId,
        revision: request.revision,
        ttlMs: request.ttlMs,
        waitTimeoutMs: request.waitMs,
      });
      return new HeldGrant(lease, this.timing);
    } catch (e) {
      if (e instanceof LeaseError) {
        const reason =
          e.code === 'queue_timeout' ? 'queue_timeout' : e.code === 'unavailable' ? 'unreachable' : 'refused';
        throw new LeaseUnavailableError(reason, e.message);
      }
      throw e;
    }
  }
}
