import {
  AcquireReply,
  AcquireRequest,
  BindRequest,
  ClaimRequest,
  GrantReply,
  ReleaseRequest,
  RenewRequest,
} from '@caseloop/lease-model';
import { PINO_LOGGER } from '@caseloop/platform';
import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Logger } from 'pino';
import { LeaseGrants } from './lease-grants';
import { LeaseHolders } from './lease-holders';
import { LeaseLine } from './lease-line';
import { LeaseRequests, replyOf } from './lease-requests';
import { LEASE_SETTINGS, LeaseSettings } from './lease.settings';
import { LeaseStore } from './lease.store';

export { LeaseUnavailable } from './lease.errors';

/**
 * Applies the lease rules to the bucket: each operation reads the entry, asks the decider, writes
 * by compare-and-set (re-reading and re-deciding when the entry moved), then records the facts.
 * Nothing a requester waits for lives in this process: the line is the bucket's `queue.<resource>`,
 * and what became of a request (granted, refused, ended) is written to `request.<requestId>`, which
 * the client follows. So whichever process — a replica, or this one restarted after a crash — finds
 * the resource free grants the head of the line and delivers the grant by writing that entry.
 *
 * This class is the front and the schedule (the bucket's watch, the sweep, one look at a time per
 * resource); the line is `LeaseLine`'s, granting and expiry `LeaseGrants`'s, a holder's operations
 * `LeaseHolders`'s, and the request entries `LeaseRequests`'.
 */
@Injectable()
export class LeaseManager implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly pumps = new Map<string, { again: boolean; running: Promise<void> }>();
  private readonly known = new Set<string>();
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly store: LeaseStore,
    private readonly line: LeaseLine,
    private readonly grants: LeaseGrants,
    private readonly holders: LeaseHolders,
    private readonly requests: LeaseRequests,
    @Inject(LEASE_SETTINGS) private readonly settings: LeaseSettings,
    @Inject(PINO_LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // The watch finds every resource with an entry or a line (at start: all of them), so a restarted
    // process serves the lines its predecessor left; the sweep then looks at each of them.
    await this.store.watch((resource) => {
      if (!this.known.has(resource)) {
        this.known.add(resource);
        void this.requests.reconcile(resource).then(() => this.schedule(resource));
      } else if (!this.pumps.has(resource)) void this.schedule(resource);
    });
    this.sweeper = setInterval(() => {
      for (const r of this.known) void this.schedule(r);
    }, this.settings.sweepIntervalMs);
    this.sweeper.unref();
  }

  /**
   * Stops serving. Requests in line stay in the bucket: another replica, or this service once it is
   * back, grants them and their clients read the grant from the bucket.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.store.close();
    await Promise.allSettled([...this.pumps.values()].map((p) => p.running));
  }

  /**
   * Grants at once when the resource is free and nobody waits; otherwise puts the request in line
   * (recorded as `LeaseRequested`) and answers `queued`. A retried request (same id) gets what became
   * of it so far.
   */
  async acquire(req: AcquireRequest): Promise<AcquireReply> {
    if (this.stopped)
      return { ok: false, code: 'unavailable', message: 'the lease service is shutting down' };
    this.known.add(req.resource);
    const prior = await this.store.readRequest(req.requestId);
    if (prior && prior.record.status !== 'queued') return replyOf(prior.record);
    const slot = await this.store.readSlot(req.resource);
    if (slot?.record.status === 'held' && slot.record.holder.requestId === req.requestId) {
      const delivered = await this.requests.deliver(slot);
      if (delivered) return replyOf(delivered);
    }
    if (!prior) {
      const granted = await this.grants.grantAtOnce(req);
      if (granted) return granted;
    }
    const queued = await this.line.join(req);
    if (queued.ok) void this.schedule(req.resource);
    return queued;
  }

  /** The requester heard of its grant and uses it: it is no longer released as unused. */
  claim(req: ClaimRequest): Promise<GrantReply> {
    return this.holders.claim(req);
  }

  renew(req: RenewRequest): Promise<GrantReply> {
    return this.holders.renew(req);
  }

  async release(req: ReleaseRequest): Promise<GrantReply> {
    const reply = await this.holders.release(req);
    void this.schedule(req.resource);
    return reply;
  }

  bind(req: BindRequest): Promise<GrantReply> {
    return this.holders.bind(req);
  }

  /** Runs the line for a resource; calls during a run coalesce into one more run after it. */
  schedule(resource: string): Promise<void> {
    const current = this.pumps.get(resource);
    if (current) {
      current.again = true;
      return current.running;
    }
    const state = { again: true, running: Promise.resolve() };
    state.running = (async () => {
      try {
        while (state.again && !this.stopped) {
          state.again = false;
          await this.grants.look(resource, () => this.stopped);
        }
      } catch (e) {
        this.logger.error({ resource, err: (e as Error).message }, 'lease line failed; the sweep retries');
      } finally {
        this.pumps.delete(resource);
      }
    })();
    this.pumps.set(resource, state);
    return state.running;
  }
}
