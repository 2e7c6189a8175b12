import {
  AcquireReply,
  AcquireRequest,
  BindRequest,
  ClaimRequest,
  GrantReply,
  LeaseCheck,
  LeaseRequestRecord,
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

export class LeaseUnavailable extends Error {
  override readonly name = 'LeaseUnavailable';
}

/**
 * Applies the lease rules to the bucket: each operation reads the entry, asks the decider, writes
 * by compare-and-set (re-reading and re-deciding when the entry moved), then records the facts.
 * Nothing a requester waits for lives in this process: the line is the bucket's `queue.<resource>`,
 * and what became of a request (granted, refused, ended) is written to `request.<requestId>`, which
 * the client follows. So whichever process — a replica, or this one restarted after a crash — finds
 * the resource free grants the head of the line and delivers the grant by writing that entry.
 */
@Injectable()
export class LeaseManager implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly pumps = new Map<string, { again: boolean; running: Promise<void> }>();
  private readonly known = new Set<string>();
  private readonly lineLengths = new Map<string, number>();
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
    // The watch finds every resource with an entry or a line (at start: all of them), so a restarted
    // process serves the lines its predecessor left; the sweep then looks at each of them.
    await this.store.watch((resource) => {
      if (!this.known.has(resource)) {
        this.known.add(resource);
        void this.reconcile(resource).then(() => this.schedule(resource));
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
      const delivered = await this.deliver(slot);
      if (delivered) return replyOf(delivered);
    }
    if (!prior) {
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
    let joined: LeaseWaiter;
    try {
      joined = await this.enqueue(req.resource, waiter);
      await this.recorder.record([requestedFact(req.resource, joined)], now);
      // create-only: a grant another process wrote meanwhile is never overwritten by `queued`
      await this.store.writeRequest(
        {
          status: 'queued',
          requestId: req.requestId,
          resource: req.resource,
          position: joined.position,
          deadline: joined.deadline,
        },
        0,
      );
    } catch (e) {
      // Not recorded, so not in line: a grant to it would go to a requester told it failed.
      await this.dequeue(req.resource, req.requestId, null).catch(() => undefined);
      return { ok: false, code: 'unavailable', message: `could not queue: ${(e as Error).message}` };
    }
    void this.schedule(req.resource);
    return { ok: true, queued: true, position: joined.position };
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
      const d = decideLease(this.grantCommand(req.resource, waiter, now), slot);
      if (d.kind !== 'write') return null;
      const revision = await this.store.writeSlot(req.resource, d.record, d.expectedRevision);
      if (revision === null) return null;
      const token = d.record.token ?? revision;
      if (d.record.status === 'held' && d.record.takeoverOf) this.metrics.expiries.inc();
      this.metrics.grants.inc();
      this.metrics.waitSeconds.observe(0);
      await this.recorder.record(d.facts(token), now);
      if (d.record.status === 'held' && d.record.takeoverOf)
        await this.endRequest(
          d.record.takeoverOf.holder.requestId,
          req.resource,
          d.record.takeoverOf.token,
          'expired',
        );
      const granted = await this.markGranted(req.resource, waiter, token, d.record.expiresAt);
      return replyOf(granted);
    } catch (e) {
      // The line below settles whatever happened (a grant written but not recorded is found as "served").
      this.logger.warn(
        { resource: req.resource, err: (e as Error).message },
        'immediate grant failed; joining the line',
      );
      return null;
    }
  }

  /** The requester heard of its grant and uses it: it is no longer released as unused. */
  claim(req: ClaimRequest): Promise<GrantReply> {
    return this.onGrant(req, (now) => ({
      type: 'Claim',
      resource: req.resource,
      asker: asker(req),
      token: req.token,
      requestId: req.requestId,
      now,
    }));
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

  private async onGrant(
    req: RenewRequest | ReleaseRequest | BindRequest | ClaimRequest,
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
          const token = d.record.token ?? revision;
          await this.recorder.record(d.facts(token), now);
          if (d.record.status === 'released') this.metrics.releases.inc();
          if (d.record.status === 'expired') this.metrics.expiries.inc();
          if (d.record.status !== 'held')
            await this.endRequest(d.record.holder.requestId, req.resource, token, d.record.status);
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

  /**
   * One look at a resource: deliver a grant its requester has not heard of, release a grant left
   * unclaimed, drop timed-out and already-served waiters, then grant the head if the resource is
   * free (or lapsed past expiry + skew, taking it over), or expire a lapsed lease nobody waits for.
   */
  private async pump(resource: string): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS && !this.stopped; attempt++) {
      const [slot, q] = await Promise.all([this.store.readSlot(resource), this.store.readQueue(resource)]);
      const now = this.clock();
      this.countLine(resource, q?.queue.waiters.length ?? 0);
      if (slot?.record.status === 'held') {
        await this.deliver(slot);
        const u = decideLease({ type: 'ReleaseUnclaimed', resource, now }, slot);
        if (u.kind === 'write') {
          const revision = await this.store.writeSlot(resource, u.record, u.expectedRevision);
          if (revision === null) continue;
          const token = u.record.token ?? revision;
          this.metrics.releases.inc();
          this.metrics.unclaimed.inc();
          await this.recorder.record(u.facts(token), now);
          await this.endRequest(slot.record.holder.requestId, resource, token, 'unclaimed');
          this.logger.warn({ resource, token }, 'released a grant its requester never claimed');
          continue;
        }
      }
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
          await this.refuseRequest(
            resource,
            w,
            'queue_timeout',
            `${resource} was not free within the wait timeout`,
          );
        }
        continue;
      }

      if (!line.head) {
        const d = decideLease({ type: 'Expire', resource, now, skewMs: this.settings.skewMs }, slot);
        if (d.kind !== 'write') return;
        const revision = await this.store.writeSlot(resource, d.record, d.expectedRevision);
        if (revision === null) continue;
        const token = d.record.token ?? revision;
        this.metrics.expiries.inc();
        await this.recorder.record(d.facts(token), now);
        await this.endRequest(d.record.holder.requestId, resource, token, 'expired');
        return;
      }

      const head = line.head;
      const d = decideLease(this.grantCommand(resource, head, now), slot);
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
      if (d.record.status === 'held' && d.record.takeoverOf)
        await this.endRequest(
          d.record.takeoverOf.holder.requestId,
          resource,
          d.record.takeoverOf.token,
          'expired',
        );
      await this.markGranted(resource, head, token, d.record.expiresAt);
      return;
    }
  }

  private grantCommand(resource: string, waiter: LeaseWaiter, now: number): LeaseCommand {
    return {
      type: 'Grant',
      resource,
      waiter,
      now,
      skewMs: this.settings.skewMs,
      claimMs: this.settings.claimMs,
    };
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

  /**
   * A held grant whose requester has not been told (the process that granted it died between the
   * compare-and-set and the request entry): record its facts (again: the same message ids, so the
   * ledger keeps one copy) and then write the grant where the requester reads it — so its case never
   * shows a release before the grant.
   */
  private async deliver(slot: LeaseSlot): Promise<LeaseRequestRecord | null> {
    const r = slot.record;
    if (r.status !== 'held') return null;
    const token = tokenOf(slot);
    const entry = await this.store.readRequest(r.holder.requestId);
    if (entry && entry.record.status === 'granted' && entry.record.token === token) return entry.record;
    if (entry && entry.record.status !== 'queued') return entry.record;
    await this.recorder.record(impliedFacts(slot), this.clock());
    return this.markGranted(r.resource, r.holder, token, r.expiresAt);
  }

  private async markGranted(
    resource: string,
    holder: { requestId: string; position: number },
    token: number,
    expiresAt: number,
  ): Promise<LeaseRequestRecord> {
    const record: LeaseRequestRecord = {
      status: 'granted',
      requestId: holder.requestId,
      resource,
      position: holder.position,
      token,
      expiresAt,
    };
    await this.putRequest(record, (prev) => prev === null || prev.status === 'queued');
    return record;
  }

  private async refuseRequest(
    resource: string,
    w: LeaseWaiter,
    code: 'queue_timeout',
    message: string,
  ): Promise<void> {
    await this.putRequest(
      { status: 'refused', requestId: w.requestId, resource, code, message },
      (prev) => prev === null || prev.status === 'queued',
    );
  }

  private async endRequest(
    requestId: string,
    resource: string,
    token: number,
    how: 'released' | 'unclaimed' | 'expired',
  ): Promise<void> {
    await this.putRequest(
      { status: 'ended', requestId, resource, token, how },
      (prev) => prev === null || prev.status !== 'ended',
    );
  }

  /** Writes a request's entry by compare-and-set, unless what is there already says more. */
  private async putRequest(
    record: LeaseRequestRecord,
    replaces: (prev: LeaseRequestRecord | null) => boolean,
  ): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const prev = await this.store.readRequest(record.requestId);
      if (!replaces(prev?.record ?? null)) return;
      if ((await this.store.writeRequest(record, prev?.revision ?? 0)) !== null) return;
    }
    throw new LeaseUnavailable(`request ${record.requestId}: the entry kept changing`);
  }

  private countLine(resource: string, n: number): void {
    if (n === 0) this.lineLengths.delete(resource);
    else this.lineLengths.set(resource, n);
    let total = 0;
    for (const v of this.lineLengths.values()) total += v;
    this.metrics.waiting.set(total);
  }

  /** After a crash between a compare-and-set and its append, the entry still says what happened. */
  private async reconcile(resource: string): Promise<void> {
    try {
      const slot = await this.store.readSlot(resource);
      if (!slot) return;
      const appended = await this.recorder.ensure(impliedFacts(slot), this.clock());
      if (appended > 0)
        this.logger.warn({ resource, appended }, 'recorded lease facts missing from the ledger');
      if (slot.record.status === 'held') await this.deliver(slot);
      else
        await this.endRequest(
          slot.record.holder.requestId,
          resource,
          tokenOf(slot),
          slot.record.status === 'released' && slot.record.unclaimed ? 'unclaimed' : slot.record.status,
        );
    } catch (e) {
      this.logger.error({ resource, err: (e as Error).message }, 'could not reconcile lease facts');
    }
  }
}

/** What a (retried) acquisition is answered, from its request entry. */
function replyOf(r: LeaseRequestRecord): AcquireReply {
  switch (r.status) {
    case 'queued':
      return { ok: true, queued: true, position: r.position };
    case 'granted':
      return { ok: true, token: r.token, expiresAt: r.expiresAt, position: r.position };
    case 'refused':
      return { ok: false, code: r.code, message: r.message };
    case 'ended':
      return { ok: false, code: 'unavailable', message: `the grant of ${r.resource} is over (${r.how})` };
  }
}

const asker = (r: RenewRequest | ReleaseRequest | BindRequest | ClaimRequest): Asker => ({
  caseId: r.caseId,
  taskId: r.taskId,
  revision: r.revision,
  correlationId: r.correlationId,
});

const granted = (c: LeaseCheck): GrantReply => ({ ok: true, ...c });
