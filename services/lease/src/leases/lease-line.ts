import { AcquireReply, AcquireRequest, LeaseWaiter, QueueSlot } from '@caseloop/lease-model';
import { Inject, Injectable } from '@nestjs/common';
import { requestedFact } from './lease.decider';
import { LeaseUnavailable, MAX_ATTEMPTS } from './lease.errors';
import { LeaseMetrics } from './lease.metrics';
import { enqueue, withoutWaiters } from './lease-queue';
import { LeaseRecorder } from './lease.recorder';
import { Clock, LEASE_CLOCK } from './lease.settings';
import { LeaseStore } from './lease.store';

/**
 * The line of requests for each resource, kept in the bucket's `queue.<resource>` by compare-and-set:
 * joining it (recorded as `LeaseRequested`), leaving it, and the gauge of how many wait.
 */
@Injectable()
export class LeaseLine {
  private readonly lengths = new Map<string, number>();

  constructor(
    private readonly store: LeaseStore,
    private readonly recorder: LeaseRecorder,
    private readonly metrics: LeaseMetrics,
    @Inject(LEASE_CLOCK) private readonly clock: Clock,
  ) {}

  /** Puts the request in line and records it; answers `queued`, or `unavailable` when it is not in line. */
  async join(req: AcquireRequest): Promise<AcquireReply> {
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
      await this.leave(req.resource, req.requestId, null).catch(() => undefined);
      return { ok: false, code: 'unavailable', message: `could not queue: ${(e as Error).message}` };
    }
    return { ok: true, queued: true, position: joined.position };
  }

  /** `seen`: the line as read before the grant; usually still current, which saves a read. */
  async leave(resource: string, requestId: string, seen: QueueSlot | null): Promise<void> {
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

  /** How many wait for `resource` as last seen; the gauge is the sum over every line looked at. */
  count(resource: string, n: number): void {
    if (n === 0) this.lengths.delete(resource);
    else this.lengths.set(resource, n);
    let total = 0;
    for (const v of this.lengths.values()) total += v;
    this.metrics.waiting.set(total);
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
}
