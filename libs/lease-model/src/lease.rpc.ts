import { assertSafeId, gitRevision, resourceName, safeId } from '@caseloop/contracts';
import { z } from 'zod';

/**
 * Request/reply between `LeaseClient` and the lease service. Every state change goes through the
 * service, the only producer allowed to append lease events; `check` alone reads the bucket directly.
 * Subjects `<namespace>.lease-rpc.<operation>` are not ledger subjects (those have four tokens).
 */
export const LEASE_OPERATIONS = ['acquire', 'claim', 'renew', 'release', 'bind'] as const;
export type LeaseRpcOperation = (typeof LEASE_OPERATIONS)[number];

export const leaseRpcSubject = (namespace: string, op: LeaseRpcOperation): string =>
  `${assertSafeId('namespace', namespace)}.lease-rpc.${op}`;
/** What the lease service subscribes to (in a queue group, so replicas share the work). */
export const leaseRpcWildcard = (namespace: string): string =>
  `${assertSafeId('namespace', namespace)}.lease-rpc.*`;

const correlationId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_:.-]{0,255}$/);
const ttlMs = z.number().int().min(50).max(3_600_000);
const who = { resource: resourceName, caseId: safeId, taskId: safeId, revision: gitRevision, correlationId };

export const acquireRequest = z.object({
  ...who,
  requestId: safeId.max(100),
  ttlMs,
  waitTimeoutMs: z.number().int().min(0).max(3_600_000),
});
export type AcquireRequest = z.infer<typeof acquireRequest>;

/** Renew, release and bind name the grant by its token; `commandId` makes a retried call idempotent. */
const onGrant = { ...who, commandId: safeId.max(100), token: z.number().int().positive() };
export const renewRequest = z.object({ ...onGrant, ttlMs: ttlMs.optional() });
/** The requester has heard of its grant and uses it; an unclaimed grant is released as unused. */
export const claimRequest = z.object({ ...onGrant, requestId: safeId.max(100) });
export const releaseRequest = z.object({ ...onGrant, captureIds: z.array(safeId).max(1000) });
export const bindRequest = z.object({ ...onGrant, captureId: safeId });
export type RenewRequest = z.infer<typeof renewRequest>;
export type ClaimRequest = z.infer<typeof claimRequest>;
export type ReleaseRequest = z.infer<typeof releaseRequest>;
export type BindRequest = z.infer<typeof bindRequest>;

export const leaseRpcRequests = {
  acquire: acquireRequest,
  claim: claimRequest,
  renew: renewRequest,
  release: releaseRequest,
  bind: bindRequest,
} as const;

export const leaseRpcErrorCode = z.enum(['invalid_request', 'queue_timeout', 'unavailable']);
export type LeaseRpcErrorCode = z.infer<typeof leaseRpcErrorCode>;

const standing = z.enum(['held', 'expired', 'released', 'foreign']);
const failure = z.object({ ok: z.literal(false), code: leaseRpcErrorCode, message: z.string().max(1000) });

/**
 * Granted at once, or `queued`: the request is in line in the bucket and its outcome will be written
 * to `request.<requestId>` by whichever lease service process decides it; the client follows that entry.
 */
export const acquireReply = z.union([
  z.object({
    ok: z.literal(true),
    token: z.number().int().positive(),
    expiresAt: z.number().int(),
    position: z.number().int().nonnegative(),
  }),
  z.object({ ok: z.literal(true), queued: z.literal(true), position: z.number().int().nonnegative() }),
  failure,
]);
export type AcquireReply = z.infer<typeof acquireReply>;

/** The grant's standing after the operation: `held` means it went through. */
export const grantReply = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    standing,
    holder: z.boolean(),
    expiresAt: z.number().int().nullable(),
    currentToken: z.number().int().positive().nullable(),
  }),
  failure,
]);
export type GrantReply = z.infer<typeof grantReply>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const encodeRpc = (body: unknown): Uint8Array => encoder.encode(JSON.stringify(body));
export const decodeRpc = <S extends z.ZodType>(schema: S, bytes: Uint8Array): z.infer<S> =>
  schema.parse(JSON.parse(decoder.decode(bytes)));
