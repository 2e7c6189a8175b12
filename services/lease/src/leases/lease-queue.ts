import { LeaseQueue, LeaseSlot, LeaseWaiter } from '@caseloop/lease-model';

/**
 * The line of waiters for one resource, first come first served. Pure: the service stores the
 * result by compare-and-set on the queue key.
 */

export function enqueue(
  queue: LeaseQueue | null,
  resource: string,
  waiter: Omit<LeaseWaiter, 'position'>,
): { queue: LeaseQueue; waiter: LeaseWaiter; added: boolean } {
  const waiters = queue?.waiters ?? [];
  const existing = waiters.find((w) => w.requestId === waiter.requestId);
  if (existing) return { queue: queue ?? { resource, waiters }, waiter: existing, added: false };
  const joined = { ...waiter, position: waiters.length };
  return { queue: { resource, waiters: [...waiters, joined] }, waiter: joined, added: true };
}

export interface LineUp {
  /** The first waiter still inside its deadline and not yet served, if any. */
  head: LeaseWaiter | null;
  /** Waiters whose deadline passed: they are refused. */
  timedOut: LeaseWaiter[];
  /** Waiters the entry shows as granted already (their grant is current or over): they leave the line. */
  served: LeaseWaiter[];
  /** The line without the timed-out and served waiters (the head stays until it is granted). */
  remaining: LeaseWaiter[];
}

/**
 * `grantable`: the resource could be granted right now. Then the first waiter in line is the head
 * even if its deadline just passed — it was in line in time, and `waitTimeoutMs: 0` means "only if free".
 */
export function lineUp(
  queue: LeaseQueue | null,
  slot: LeaseSlot | null,
  now: number,
  grantable = false,
): LineUp {
  const timedOut: LeaseWaiter[] = [];
  const served: LeaseWaiter[] = [];
  const remaining: LeaseWaiter[] = [];
  for (const w of queue?.waiters ?? []) {
    if (slot && slot.record.holder.requestId === w.requestId) served.push(w);
    else if (grantable && remaining.length === 0) remaining.push(w);
    else if (now > w.deadline) timedOut.push(w);
    else remaining.push(w);
  }
  return { head: remaining[0] ?? null, timedOut, served, remaining };
}

export const withoutWaiters = (queue: LeaseQueue, requestIds: ReadonlySet<string>): LeaseQueue => ({
  resource: queue.resource,
  waiters: queue.waiters.filter((w) => !requestIds.has(w.requestId)),
});
