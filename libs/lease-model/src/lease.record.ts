import { gitRevision, resourceName, safeId } from '@caseloop/contracts';
import { z } from 'zod';

/**
 * What the lease bucket holds. One key per resource (`lease.<kind>.<name>`) with the current or last
 * grant, and one (`queue.<kind>.<name>`) with its waiters in arrival order. Both the lease service
 * (the only writer) and every `LeaseClient` (reading for `check`) parse entries with these schemas.
 * Times are epoch milliseconds.
 */
const epochMs = z.number().int().nonnegative();
const token = z.number().int().positive();
const correlationId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_:.-]{0,255}$/);

export const leaseHolder = z.object({
  requestId: safeId,
  caseId: safeId,
  taskId: safeId,
  revision: gitRevision,
  correlationId,
  /** How many requests were ahead of it when it joined the line (the holder is not in line). */
  position: z.number().int().nonnegative(),
});
export type LeaseHolder = z.infer<typeof leaseHolder>;

const common = {
  resource: resourceName,
  holder: leaseHolder,
  grantedAt: epochMs,
  expiresAt: epochMs,
  captureIds: z.array(safeId).max(1000),
};

/** A lease that lapsed and was taken over in the same write that granted the next holder. */
export const supersededLease = z.object({
  token,
  holder: leaseHolder,
  expiresAt: epochMs,
  captureIds: z.array(safeId).max(1000),
});
export type SupersededLease = z.infer<typeof supersededLease>;

export const leaseRecord = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('held'),
    ...common,
    /** null on the grant itself: its own KV revision is the token. Later writes carry it forward. */
    token: token.nullable(),
    ttlMs: z.number().int().positive(),
    renewals: z.number().int().nonnegative(),
    takeoverOf: supersededLease.nullable(),
    /**
     * Until the requester claims the grant it has heard of, it may have stopped listening: a grant
     * still unclaimed at this time is released as unused. Absent (or null) once claimed.
     */
    claimBy: epochMs.nullable().optional(),
  }),
  z.object({
    status: z.literal('released'),
    ...common,
    token,
    releasedAt: epochMs,
    /** Released by the service because its requester never claimed it. */
    unclaimed: z.boolean().optional(),
  }),
  z.object({ status: z.literal('expired'), ...common, token, expiredAt: epochMs }),
]);
export type LeaseRecord = z.infer<typeof leaseRecord>;
export type HeldLeaseRecord = Extract<LeaseRecord, { status: 'held' }>;

/** A lease entry as read: its record and the KV revision to compare-and-set against. */
export interface LeaseSlot {
  revision: number;
  record: LeaseRecord;
}

export const leaseWaiter = leaseHolder.extend({
  ttlMs: z.number().int().positive(),
  enqueuedAt: epochMs,
  /** After this the request is refused (`queue_timeout`) instead of granted. */
  deadline: epochMs,
});
export type LeaseWaiter = z.infer<typeof leaseWaiter>;

export const leaseQueue = z.object({ resource: resourceName, waiters: z.array(leaseWaiter).max(10_000) });
export type LeaseQueue = z.infer<typeof leaseQueue>;

export interface QueueSlot {
  revision: number;
  queue: LeaseQueue;
}

/**
 * What became of one acquisition (`request.<requestId>`), written by whichever lease service process
 * decided it and followed by the requesting client (direct gets), so a grant reaches its requester
 * even when the process that took the request is gone. `granted` is written only after the grant's
 * facts are on the case.
 */
export const leaseRequestRecord = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('queued'),
    requestId: safeId,
    resource: resourceName,
    position: z.number().int().nonnegative(),
    deadline: epochMs,
  }),
  z.object({
    status: z.literal('granted'),
    requestId: safeId,
    resource: resourceName,
    position: z.number().int().nonnegative(),
    token,
    expiresAt: epochMs,
  }),
  z.object({
    status: z.literal('refused'),
    requestId: safeId,
    resource: resourceName,
    code: z.enum(['queue_timeout', 'unavailable']),
    message: z.string().max(1000),
  }),
  /** The grant is over: released by its holder, released unclaimed, or expired. */
  z.object({
    status: z.literal('ended'),
    requestId: safeId,
    resource: resourceName,
    token,
    how: z.enum(['released', 'unclaimed', 'expired']),
  }),
]);
export type LeaseRequestRecord = z.infer<typeof leaseRequestRecord>;

/** The fencing token of the grant an entry belongs to. */
export const tokenOf = (slot: LeaseSlot): number => slot.record.token ?? slot.revision;

/** KV keys allow `[-/_=.a-zA-Z0-9]`: `browser:default` becomes `lease.browser.default`. */
const keyPart = (resource: string): string => {
  const parsed = resourceName.safeParse(resource);
  if (!parsed.success) throw new RangeError(`not a resource name: ${JSON.stringify(resource.slice(0, 100))}`);
  return resource.replace(':', '.');
};
export const leaseKey = (resource: string): string => `lease.${keyPart(resource)}`;
export const queueKey = (resource: string): string => `queue.${keyPart(resource)}`;
export const requestKey = (requestId: string): string => {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(requestId))
    throw new RangeError(`not a request id: ${JSON.stringify(requestId.slice(0, 100))}`);
  return `request.${requestId}`;
};

/** The resource a bucket key belongs to, and which of the two keys it is; null for anything else. */
export function parseLeaseKey(key: string): { kind: 'lease' | 'queue'; resource: string } | null {
  const m = /^(lease|queue)\.([a-z][a-z0-9_-]{0,31})\.([A-Za-z0-9_-]{1,64})$/.exec(key);
  return m ? { kind: m[1] as 'lease' | 'queue', resource: `${m[2]}:${m[3]}` } : null;
}

/**
 * - `held`: the token is the current grant and its recorded expiry is ahead;
 * - `expired`: the token is the current (or last) grant but its expiry has passed;
 * - `released`: the holder gave it back;
 * - `foreign`: the resource is held by, or was last granted to, another token (or never granted).
 */
export type LeaseStanding = 'held' | 'expired' | 'released' | 'foreign';

export interface LeaseCheck {
  holder: boolean;
  standing: LeaseStanding;
  /** The recorded expiry of the checked token's grant, when it is the current one. */
  expiresAt: number | null;
  /** The token of whatever grant the entry now records (null: never granted). */
  currentToken: number | null;
}

/**
 * "Is token T still the holder of R?" — pure, from one read of the entry. The holder judges by the
 * recorded expiry without a margin; a taker waits for expiry plus the skew margin, so clocks may
 * disagree by up to that margin without two holders believing in the same resource.
 */
export function standingOf(slot: LeaseSlot | null, token: number, now: number): LeaseCheck {
  if (!slot) return { holder: false, standing: 'foreign', expiresAt: null, currentToken: null };
  const current = tokenOf(slot);
  if (current !== token)
    return { holder: false, standing: 'foreign', expiresAt: null, currentToken: current };
  const { record } = slot;
  switch (record.status) {
    case 'held': {
      const live = now < record.expiresAt;
      return {
        holder: live,
        standing: live ? 'held' : 'expired',
        expiresAt: record.expiresAt,
        currentToken: current,
      };
    }
    case 'released':
      return { holder: false, standing: 'released', expiresAt: record.expiresAt, currentToken: current };
    case 'expired':
      return { holder: false, standing: 'expired', expiresAt: record.expiresAt, currentToken: current };
  }
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

export const encodeRecord = (record: LeaseRecord | LeaseQueue | LeaseRequestRecord): Uint8Array =>
  encoder.encode(JSON.stringify(record));
export const decodeLeaseRecord = (bytes: Uint8Array): LeaseRecord =>
  leaseRecord.parse(JSON.parse(decoder.decode(bytes)));
export const decodeLeaseQueue = (bytes: Uint8Array): LeaseQueue =>
  leaseQueue.parse(JSON.parse(decoder.decode(bytes)));
export const decodeLeaseRequest = (bytes: Uint8Array): LeaseRequestRecord =>
  leaseRequestRecord.parse(JSON.parse(decoder.decode(bytes)));
