import { z } from 'zod';
import { defineEvent } from '../define-event';
import { gitRevision, isoTime, safeId } from './shared.schemas';

/** Shared-client leases: worktrees isolate files, not the signed-in browser or device. */

export const resourceName = z.string().regex(/^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_-]{1,64}$/, 'resource like browser:default');

const binding = { resource: resourceName, taskId: safeId, revision: gitRevision };

export const LeaseRequested = defineEvent({
  type: 'LeaseRequested',
  producer: 'lease',
  aggregate: 'case',
  description: 'A task queued for a shared client (first come, first served).',
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
  description: 'Renewed by compare-and-set; the new KV revision is the new token.',
  schema: z.object({ ...binding, previousToken: z.number().int().positive(), token: z.number().int().positive(), expiresAt: isoTime }),
});

export const LeaseReleased = defineEvent({
  type: 'LeaseReleased',
  producer: 'lease',
  aggregate: 'case',
  description: 'The holder gave the client back, with the captures it took under this lease.',
  schema: z.object({ ...binding, token: z.number().int().positive(), captureIds: z.array(safeId) }),
});

export const LeaseExpired = defineEvent({
  type: 'LeaseExpired',
  producer: 'lease',
  aggregate: 'case',
  description: 'The recorded expiry (plus skew margin) passed without renewal: the lease is void.',
  schema: z.object({ ...binding, token: z.number().int().positive(), expiredAt: isoTime }),
});

export const LeaseRefused = defineEvent({
  type: 'LeaseRefused',
  producer: 'lease',
  aggregate: 'case',
  description: 'A request, renewal or capture binding that could not be honoured.',
  schema: z.object({
    ...binding,
    reason: z.enum(['lost_cas', 'expired', 'not_holder', 'queue_timeout', 'unknown_resource']),
    token: z.number().int().positive().nullable(),
  }),
});

export const leaseEvents = [LeaseRequested, LeaseGranted, LeaseRenewed, LeaseReleased, LeaseExpired, LeaseRefused] as const;
