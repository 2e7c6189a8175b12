import { AcquireReply, AcquireRequest, LeaseWaiter } from '@caseloop/lease-model';
import { PINO_LOGGER } from '@caseloop/platform';
import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { decideLease, LeaseCommand, unservedFacts } from './lease.decider';
import { MAX_ATTEMPTS } from './lease.errors';
import { LeaseMetrics } from './lease.metrics';
import { LeaseLine } from './lease-line';
import { lineUp, withoutWaiters } from './lease-queue';
import { LeaseRecorder } from './lease.recorder';
import { LeaseRequests, replyOf } from './lease-requests';
import { Clock, LEASE_CLOCK, LEASE_SETTINGS, LeaseSettings } from './lease.settings';
import { LeaseStore } from './lease.store';

/**
 * Granting and the expiry clock: a free resource granted at once to a request nobody is ahead of,
 * and each look at a resource's line (`look`), which delivers, releases unclaimed grants, drops
 * timed-out waiters, grants the head or expires a lapsed lease.
 */
@Injectable()
export class LeaseGrants {
  constructor(
    private readonly store: LeaseStore,
    private readonly recorder: LeaseRecorder,
    private readonly metrics: LeaseMetrics,
    private readonly line: LeaseLine,
    private readonly requests: LeaseRequests,
    @Inject(LEASE_SETTINGS) private readonly settings: LeaseSettings,
    @Inject(LEASE_CLOCK) private readonly clock: Clock,
    @Inject(PINO_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * The common case without a line: the resource is free (or lapsed) and nobody waits, so the request
   * is granted by one compare-and-set without joining the queue. Anyone who joined the line meanwhile
   * arrived at the same moment; the compare-and-set still lets only one of them through.
   */
  async grantAtOnce(req: AcquireRequest): Promise<AcquireReply | null> {
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
        await this.requests.end(
          d.record.takeoverOf.holder.requestId,
          req.resource,
          d.record.takeoverOf.token,
          'expired',
        );
      const granted = await this.requests.markGranted(req.resource, waiter, token, d.record.expiresAt);
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

  /**
   * One look at a resource: deliver a grant its requester has not heard of, release a grant left
   * unclaimed, drop timed-out and already-served waiters, then grant the head if the resource is
   * free (or lapsed past expiry + skew, taking it over), or expire a lapsed lease nobody waits for.
   * `stopped`: asked before every attempt; a stopping service leaves the rest to another look.
   */
  async look(resource: string, stopped: () => boolean): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS && !stopped(); attempt++) {
      const [slot, q] = await Promise.all([this.store.readSlot(resource), this.store.readQueue(resource)]);
      const now = this.clock();
      this.line.count(resource, q?.queue.waiters.length ?? 0);
      if (slot?.record.status === 'held') {
        await this.requests.deliver(slot);
        const u = decideLease({ type: 'ReleaseUnclaimed', resource, now }, slot);
        if (u.kind === 'write') {
          const revision = await this.store.writeSlot(resource, u.record, u.expectedRevision);
          if (revision === null) continue;
          const token = u.record.token ?? revision;
          this.metrics.releases.inc();
          this.metrics.unclaimed.inc();
          await this.recorder.record(u.facts(token), now);
          await this.requests.end(slot.record.holder.requestId, resource, token, 'unclaimed');
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
          await this.requests.refuse(
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
        await this.requests.end(d.record.holder.requestId, resource, token, 'expired');
        return;
      }

      const head = line.head;
      const d = decideLease(this.grantCommand(resource, head, now), slot);
      // `wait`: busy. `unchanged`/`served` cannot happen: lineUp already took served waiters out.
      if (d.kind !== 'write') return;
      const revision = await this.store.writeSlot(resource, d.record, d.expectedRevision);
      if (revision === null) continue;
      const token = d.record.token ?? revision;
      await this.line.leave(resource, head.requestId, q);
      if (d.record.status === 'held' && d.record.takeoverOf) this.metrics.expiries.inc();
      this.metrics.grants.inc();
      this.metrics.waitSeconds.observe(Math.max(0, now - head.enqueuedAt) / 1000);
      await this.recorder.record(d.facts(token), now);
      if (d.record.status === 'held' && d.record.takeoverOf)
        await this.requests.end(
          d.record.takeoverOf.holder.requestId,
          resource,
          d.record.takeoverOf.token,
          'expired',
        );
      await this.requests.markGranted(resource, head, token, d.record.expiresAt);
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
}
