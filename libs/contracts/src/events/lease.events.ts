import { z } from 'zod';
import { defineEvent } from '../define-event';
import { gitRevision, isoTime, safeId } from './shared.schemas';

/**
 * Shared-client leases: worktrees isolate files, not the signed-in browser or device.
 * The fencing token is the KV revision at which the lease was granted. It stays the same through
 * renewals and capture bindings (every capture of one grant carries one token) and grows with every
 * new grant of the resource, so a stale holder's token is always smaller than the current one.
 */

export const resourceName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_-]{1,64}$/, 'resource like browser:default');

const binding = { resource: resourceName, taskId: safeId, revision: gitRevision };
const token = z.number().int().positive();

export const leaseOperation = z.enum(['acquire', 'renew', 'release', 'bind_capture']);

export const LeaseRequested = defineEvent({
  type: 'LeaseRequested',
  producer: 'lease',
  aggregate: 'case',
  description: 'A task queued for a shared client (first come, first served).',
  /** `position`: how many requests were ahead of it in line (the current holder is not in line). */
  schema: z.object({ ...binding, requestId: safeId, position: z.number().int().nonnegative() }),
});

export const LeaseGranted = defineEvent({
  type: 'LeaseGranted',
  producer: 'lease',
  aggregate: 'case',
  description: 'The task holds the client. The KV revision of the grant is its fencing token.',
  schema: z.object({ ...binding, requestId: safeId, token: z.number().int().positive(), expiresAt: isoTime }),
});

export const LeaseRenewed = defineEvent({
  type: 'LeaseRenewed',
  producer: 'lease',
  aggregate: 'case',
  description:
    'Renewed by compare-and-set on the lease entry; the fencing token is unchanged, the expiry moves.',
  schema: z.object({
    ...binding,
    token,
    expiresAt: isoTime,
    /** Written by early producers that re-issued tokens on renewal; today it equals `token` when present. */
    previousToken: token.optional(),
    renewals: z.number().int().positive().optional(),
  }),
});

export const LeaseReleased = defineEvent({
  type: 'LeaseReleased',
  producer: 'lease',
  aggregate: 'case',
  description:
    'The holder gave the client back, with the captures it took under this lease — or, `unclaimed`, the lease service released a grant its requester never claimed (it had stopped listening).',
  schema: z.object({
    ...binding,
    token: z.number().int().positive(),
    captureIds: z.array(safeId),
    unclaimed: z.boolean().optional(),
  }),
});

export const LeaseExpired = defineEvent({
  type: 'LeaseExpired',
  producer: 'lease',
  aggregate: 'case',
  description: 'The recorded expiry (plus skew margin) passed without renewal: the lease is void.',
  schema: z.object({
    ...binding,
    token,
    /** The recorded expiry: every capture of this token taken at or after it is void. */
    expiredAt: isoTime,
    /** The captures bound to the grant before it lapsed. */
    captureIds: z.array(safeId).optional(),
    /** The request granted the resource in the same compare-and-set, if a waiter took it over. */
    takenOverBy: safeId.nullable().optional(),
  }),
});

export const LeaseRefused = defineEvent({
  type: 'LeaseRefused',
  producer: 'lease',
  aggregate: 'case',
  description: 'A request, renewal or capture binding that could not be honoured.',
  schema: z.object({
    ...binding,
    /** `withdrawn`: the request left the line ungranted because the lease service serving it stopped. */
    reason: z.enum(['lost_cas', 'expired', 'not_holder', 'queue_timeout', 'unknown_resource', 'withdrawn']),
    token: z.number().int().positive().nullable(),
    operation: leaseOperation.optional(),
    requestId: safeId.optional(),
  }),
});

export const leaseEvents = [
  LeaseRequested,
  LeaseGranted,
  LeaseRenewed,
  LeaseReleased,
  LeaseExpired,
  LeaseRefused,
] as const;
