import {
  AcquireReply,
  AcquireRequest,
  BindRequest,
  GrantReply,
  LeaseCheck,
  LeaseSlot,
  LeaseWaiter,
  QueueSlot,
  ReleaseRequest,
  RenewRequest,
  standingOf,
  tokenOf,
} from '@caseloop/lease-model';
import { PINO_LOGGER } from '@caseloop/platform';
import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Logger } from 'pino';
import {
  Asker,
  decideLease,
  impliedFacts,
  LeaseCommand,
  requestedFact,
  unservedFacts,
} from './lease.decider';
import { LeaseMetrics } from './lease.metrics';
import { enqueue, lineUp, withoutWaiters } from './lease-queue';
import { LeaseRecorder } from './lease.recorder';
import { Clock, LEASE_CLOCK, LEASE_SETTINGS, LeaseSettings } from './lease.settings';
import { LeaseStore } from './lease.store';

/** Compare-and-set attempts before an operation gives up as `unavailable` (only under pathological contention). */
const MAX_ATTEMPTS = 50;

interface LocalWaiter {
  resource: string;
  /** As it joined the line; null until it has. */
  joined: LeaseWaiter | null;
  enqueuedAt: number;
  position: number;
  timer: NodeJS.Timeout;
  resolvers: ((reply: AcquireReply) => void)[];
}

export class LeaseUnavailable extends Error {
  override readonly name = 'LeaseUnavailable';
}

/**
 * Applies the lease rules to the bucket: each operation reads the entry, asks the decider, writes
 * by compare-and-set (re-reading and re-deciding when the entry moved), then records the facts.
 * Waiting requests are held here until they are granted or their deadline passes; the resource's
 * line lives in the bucket, so several replicas serve one line: whichever sees the resource free
 * grants the head, and the replica holding that request learns of it from the bucket watch.
 */
@Injectable()
export class LeaseManager implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly waiting = new Map<string, LocalWaiter>();
  private readonly pumps = new Map<string, { again: boolean; running: Promise<void> }>();
  private readonly known = new Set<string>();
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly store: LeaseStore,
    private readonly recorder: LeaseRecorder,
    private readonly metrics: LeaseMetrics,
    @Inject(LEASE_SETTINGS) private readonly settings: LeaseSettings,
    @Inject(LEASE_CLOCK) private readonly clock: Clock,
    @Inject(PINO_LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Granting is driven by this instance's own requests, releases, deadlines and the sweep; the
    // watch serves requests waiting here that another replica granted, and finds resources to sweep.
    await this.store.watch((resource, kind) => {
      if (!this.known.has(resource)) {
        this.known.add(resource);
        void this.reconcile(resource);
        void this.schedule(resource);
      }
      // grants are writes of the lease entry; changes of the line alone grant nobody
      if (kind === 'lease' && this.waitingOn(resource)) void this.refresh(resource);
    });
    this.sweeper = setInterval(() => {
      for (const r of this.known) void this.schedule(r);
    }, this.settings.sweepIntervalMs);
    this.sweeper.unref();
  }

  /**
   * Stops serving. Requests waiting here leave the line (`LeaseRefused(withdrawn)`) and are answered
   * `unavailable`, so no grant is made to a requester that has stopped listening — unless another
   * replica granted one meanwhile, which is then answered as usual.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.store.close();
    await Promise.allSettled([...this.pumps.values()].map((p) => p.running));
    await Promise.allSettled([...this.waiting.entries()].map(([id, w]) => this.withdraw(id, w)));
  }

  private async withdraw(requestId: string, w: LocalWaiter): Promise<void> {
    try {
      await this.dequeue(w.resource, requestId, null);
      const slot = await this.store.readSlot(w.resource);
      if (slot?.record.status === 'held' && slot.record.holder.requestId === requestId) {
        await this.settleGranted(slot);
        return;
      }
      if (w.joined)
        await this.recorder.record(unservedFacts(w.resource, w.joined, 'withdrawn'), this.clock());
    } catch (e) {
      this.logger.warn(
        { resource: w.resource, err: (e as Error).message },
        'could not withdraw a waiting request',
      );
    }
    this.settle(requestId, { ok: false, code: 'unavailable', message: 'the lease service is shutting down' });
  }

  async acquire(req: AcquireRequest): Promise<AcquireReply> {
    if (this.stopped)
      return { ok: false, code: 'unavailable', message: 'the lease service is shutting down' };
    this.known.add(req.resource);
    if (!this.waiting.has(req.requestId)) {
      const granted = await this.grantAtOnce(req);
      if (granted) return granted;
    }
    const now = this.clock();
    const waiter: Omit<LeaseWaiter, 'position'> = {
      requestId: req.requestId,
      caseId: req.caseId,
      taskId: req.taskId,
      revision: req.revision,
      correlationId: req.correlationId,
      ttlMs: req.ttlMs,
      enqueuedAt: now,
      deadline: now + req.waitTimeoutMs,
    };
    const reply = new Promise<AcquireReply>((resolve) => {
      const existing = this.waiting.get(req.requestId);
      if (existing) {
        existing.resolvers.push(resolve);
        return;
      }
      // The deadline wakes the line so the request is refused (or, if the resource is free, granted).
      const timer = setTimeout(() => void this.schedule(req.resource), req.waitTimeoutMs + 1);
      this.waiting.set(req.requestId, {
        resource: req.resource,
        joined: null,
        enqueuedAt: now,
        position: 0,
        timer,
        resolvers: [resolve],
      });
      this.metrics.waiting.set(this.waiting.size);
    });
    try {
      const joined = await this.enqueue(req.resource, waiter);
      const local = this.waiting.get(req.requestId);
      if (local) {
        local.position = joined.position;
        local.joined = joined;
      }
      await this.recorder.record([requestedFact(req.resource, joined)], now);
    } catch (e) {
      // Not recorded, so not in line: a grant to it would go to a requester told it failed.
      await this.dequeue(req.resource, req.requestId, null).catch(() => undefined);
      this.settle(req.requestId, {
        ok: false,
        code: 'unavailable',
        message: `could not queue: ${(e as Error).message}`,
      });
    }
    void this.schedule(req.resource);
    return reply;
  }

  /**
   * The common case without a line: the resource is free (or lapsed) and nobody waits, so the request
   * is granted by one compare-and-set without joining the queue. Anyone who joined the line meanwhile
   * arrived at the same moment; the compare-and-set still lets only one of them through.
   */
  private async grantAtOnce(req: AcquireRequest): Promise<AcquireReply | null> {
    try {
      const [slot, q] = await Promise.all([
        this.store.readSlot(req.resource),
        this.store.readQueue(req.resource),
      ]);
      if (q && q.queue.waiters.length > 0) return null;
      const now = this.clock();
      const waiter: LeaseWaiter = {
        requestId: req.requestId,
        caseId: req.caseId,
        taskId: req.taskId,
        revision: req.revision,
        correlationId: req.correlationId,
        position: 0,
        ttlMs: req.ttlMs,
        enqueuedAt: now,
        deadline: now + req.waitTimeoutMs,
      };
      const d = decideLease(
        { type: 'Grant', resource: req.resource, waiter, now, skewMs: this.settings.skewMs },
        slot,
      );
      if (d.kind !== 'write') return null;
      const revision = await this.store.writeSlot(req.resource, d.record, d.expectedRevision);
      if (revision === null) return null;
      const token = d.record.token ?? revision;
      if (d.record.status === 'held' && d.record.takeoverOf) this.metrics.expiries.inc();
      this.metrics.grants.inc();
      this.metrics.waitSeconds.observe(0);
      await this.recorder.record(d.facts(token), now);
      return { ok: true, token, expiresAt: d.record.expiresAt, position: 0 };
    } catch (e) {
      // The line below settles whatever happened (a grant written but not recorded is found as "served").
      this.logger.warn(
        { resource: req.resource, err: (e as Error).message },
        'immediate grant failed; joining the line',
      );
      return null;
    }
  }

  renew(req: RenewRequest): Promise<GrantReply> {
    return this.onGrant(req, (now) => ({
      type: 'Renew',
      resource: req.resource,
      asker: asker(req),
      token: req.token,
      now,
      ...(req.ttlMs ? { ttlMs: req.ttlMs } : {}),
    }));
  }

  async release(req: ReleaseRequest): Promise<GrantReply> {
    const reply = await this.onGrant(req, (now) => ({
      type: 'Release',
      resource: req.resource,
      asker: asker(req),
      token: req.token,
      captureIds: req.captureIds,
      now,
    }));
    void this.schedule(req.resource);
    return reply;
  }

  bind(req: BindRequest): Promise<GrantReply> {
    return this.onGrant(req, (now) => ({
      type: 'BindCapture',
      resource: req.resource,
      asker: asker(req),
      token: req.token,
      captureId: req.captureId,
      now,
    }));
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
          await this.pump(resource);
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

  private async onGrant(
    req: RenewRequest | ReleaseRequest | BindRequest,
    command: (now: number) => LeaseCommand,
  ): Promise<GrantReply> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const slot = await this.store.readSlot(req.resource);
      const now = this.clock();
      const d = decideLease(command(now), slot);
      switch (d.kind) {
        case 'write': {
          const revision = await this.store.writeSlot(req.resource, d.record, d.expectedRevision);
          if (revision === null) continue;
          await this.recorder.record(d.facts(d.record.token ?? revision), now);
          if (d.record.status === 'released') this.metrics.releases.inc();
          if (d.record.status === 'expired') this.metrics.expiries.inc();
          return granted(standingOf({ revision, record: d.record }, req.token, now));
        }
        case 'refuse':
          this.metrics.refusals.inc({ reason: d.reason });
          await this.recorder.record(d.facts, now);
          return granted(standingOf(slot, req.token, now));
        case 'wait':
        case 'unchanged':
        case 'served':
          return granted(standingOf(slot, req.token, now));
      }
    }
    throw new LeaseUnavailable(`${req.resource}: the entry kept changing`);
  }

  /**
   * One look at a resource: drop timed-out and already-served waiters, then grant the head if the
   * resource is free (or lapsed past expiry + skew, taking it over), or expire a lapsed lease
   * nobody waits for.
   */
  private async pump(resource: string): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS && !this.stopped; attempt++) {
      const [slot, q] = await Promise.all([this.store.readSlot(resource), this.store.readQueue(resource)]);
      const now = this.clock();
      if (slot?.record.status === 'held') await this.settleGranted(slot);
      const grantable =
        !slot || slot.record.status !== 'held' || now > slot.record.expiresAt + this.settings.skewMs;
      const line = lineUp(q?.queue ?? null, slot, now, grantable);

      if (q && line.timedOut.length + line.served.length > 0) {
        const leaving = new Set([...line.timedOut, ...line.served].map((w) => w.requestId));
        if ((await this.store.writeQueue(resource, withoutWaiters(q.queue, leaving), q.revision)) === null)
          continue;
        for (const w of line.timedOut) {
          this.metrics.refusals.inc({ reason: 'queue_timeout' });
          await this.recorder.record(unservedFacts(resource, w, 'queue_timeout'), now);
          this.settle(w.requestId, {
            ok: false,
            code: 'queue_timeout',
            message: `${resource} was not free within the wait timeout`,
          });
        }
        continue;
      }

      if (!line.head) {
        const d = decideLease({ type: 'Expire', resource, now, skewMs: this.settings.skewMs }, slot);
        if (d.kind !== 'write') return;
        const revision = await this.store.writeSlot(resource, d.record, d.expectedRevision);
        if (revision === null) continue;
        this.metrics.expiries.inc();
        await this.recorder.record(d.facts(d.record.token ?? revision), now);
        return;
      }

      const head = line.head;
      const d = decideLease(
        { type: 'Grant', resource, waiter: head, now, skewMs: this.settings.skewMs },
        slot,
      );
      // `wait`: busy. `unchanged`/`served` cannot happen: lineUp already took served waiters out.
      if (d.kind !== 'write') return;
      const revision = await this.store.writeSlot(resource, d.record, d.expectedRevision);
      if (revision === null) continue;
      const token = d.record.token ?? revision;
      await this.dequeue(resource, head.requestId, q);
      if (d.record.status === 'held' && d.record.takeoverOf) this.metrics.expiries.inc();
      this.metrics.grants.inc();
      this.metrics.waitSeconds.observe(Math.max(0, now - head.enqueuedAt) / 1000);
      await this.recorder.record(d.facts(token), now);
      this.settle(head.requestId, {
        ok: true,
        token,
        expiresAt: d.record.expiresAt,
        position: this.waiting.get(head.requestId)?.position ?? 0,
      });
      return;
    }
  }

  private async enqueue(resource: string, waiter: Omit<LeaseWaiter, 'position'>): Promise<LeaseWaiter> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const q = await this.store.readQueue(resource);
      const next = enqueue(q?.queue ?? null, resource, waiter);
      if (!next.added) return next.waiter;
      if ((await this.store.writeQueue(resource, next.queue, q?.revision ?? 0)) !== null) return next.waiter;
    }
    throw new LeaseUnavailable(`${resource}: the line kept changing`);
  }

  /** `seen`: the line as read before the grant; usually still current, which saves a read. */
  private async dequeue(resource: string, requestId: string, seen: QueueSlot | null): Promise<void> {
    let known = seen;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const q = known ?? (await this.store.readQueue(resource));
      known = null;
      if (!q || !q.queue.waiters.some((w) => w.requestId === requestId)) return;
      if (
        (await this.store.writeQueue(resource, withoutWaiters(q.queue, new Set([requestId])), q.revision)) !==
        null
      )
        return;
    }
    // Left in line, it is dropped as `served` on the next look (the entry names it as the holder).
  }

  private waitingOn(resource: string): boolean {
    for (const w of this.waiting.values()) if (w.resource === resource) return true;
    return false;
  }

  private async refresh(resource: string): Promise<void> {
    try {
      const slot = await this.store.readSlot(resource);
      if (slot?.record.status === 'held') await this.settleGranted(slot);
    } catch (e) {
      this.logger.warn(
        { resource, err: (e as Error).message },
        'could not read a lease entry; the sweep retries',
      );
    }
  }

  /**
   * A request held here whose grant another replica (or an earlier attempt) wrote. The grant's facts
   * are recorded (again: the same message ids, so the ledger keeps one copy) before the requester
   * hears of it, so its case never shows a release before the grant.
   */
  private async settleGranted(slot: LeaseSlot): Promise<void> {
    const r = slot.record;
    const local = this.waiting.get(r.holder.requestId);
    if (!local || r.status !== 'held') return;
    await this.recorder.record(impliedFacts(slot), this.clock());
    this.settle(r.holder.requestId, {
      ok: true,
      token: tokenOf(slot),
      expiresAt: r.expiresAt,
      position: local.position,
    });
  }

  private settle(requestId: string, reply: AcquireReply): void {
    const local = this.waiting.get(requestId);
    if (!local) return;
    clearTimeout(local.timer);
    this.waiting.delete(requestId);
    this.metrics.waiting.set(this.waiting.size);
    for (const resolve of local.resolvers) resolve(reply);
  }

  /** After a crash between a compare-and-set and its append, the entry still says what happened. */
  private async reconcile(resource: string): Promise<void> {
    try {
      const slot = await this.store.readSlot(resource);
      if (!slot) return;
      const appended = await this.recorder.ensure(impliedFacts(slot), this.clock());
      if (appended > 0)
        this.logger.warn({ resource, appended }, 'recorded lease facts missing from the ledger');
    } catch (e) {
      this.logger.error({ resource, err: (e as Error).message }, 'could not reconcile lease facts');
    }
  }
}

const asker = (r: RenewRequest | ReleaseRequest | BindRequest): Asker => ({
  caseId: r.caseId,
  taskId: r.taskId,
  revision: r.revision,
  correlationId: r.correlationId,
});

const granted = (c: LeaseCheck): GrantReply => ({ ok: true, ...c });
