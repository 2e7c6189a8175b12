import { Lease, LeaseCheck, LeaseClient, LeaseError } from '@caseloop/lease-client';
import { HeldLease, LeasePort, LeaseRequest, LeaseStanding, LeaseUnavailableError } from './lease.port';

/** A grant that is no longer ours: expired is its own kind; released or taken over is foreign. */
const standingOf = (c: LeaseCheck): LeaseStanding =>
  c.holder ? 'held' : c.standing === 'expired' ? 'expired' : 'foreign';

class HeldGrant implements HeldLease {
  constructor(private readonly lease: Lease) {}
  get resource(): string {
    return this.lease.resource;
  }
  get token(): number {
    return this.lease.token;
  }
  expiresAt(): number {
    return this.lease.expiresAt;
  }
  async check(): Promise<LeaseStanding> {
    return standingOf(await this.lease.check());
  }
  async renew(): Promise<LeaseStanding> {
    return standingOf(await this.lease.renew());
  }
  async bindCapture(captureId: string): Promise<LeaseStanding> {
    return standingOf(await this.lease.bindCapture(captureId));
  }
  async release(captureIds: string[]): Promise<void> {
    await this.lease.release(captureIds);
  }
}

/**
 * The lease service's client as the browser phase sees it. Binding to the lease bucket waits for
 * the first acquisition, so the evidence service boots before the lease service has created it.
 */
export class LeaseClientAdapter implements LeasePort {
  private client: Promise<LeaseClient> | null = null;

  constructor(private readonly connect: () => Promise<LeaseClient>) {}

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
      return new HeldGrant(lease);
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
