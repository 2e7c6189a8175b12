import { KV, NatsConnection } from 'nats';
import { ulid } from 'ulid';
import { z } from 'zod';
import { LeaseError } from './lease.errors';
import { decodeLeaseRecord, LeaseCheck, leaseKey, standingOf } from '@caseloop/lease-model';
import {
  acquireReply,
  AcquireRequest,
  decodeRpc,
  encodeRpc,
  GrantReply,
  grantReply,
  LeaseRpcOperation,
  leaseRpcSubject,
} from '@caseloop/lease-model';

export interface LeaseClientOptions {
  namespace: string;
  /** The lease bucket the lease service writes (`LEASE_BUCKET`). */
  bucket: string;
  /** Timeout of renew, release and bind calls. */
  requestTimeoutMs?: number;
  /** How much longer than `waitTimeoutMs` an acquisition waits for the service's answer. */
  replyMarginMs?: number;
  /** Epoch milliseconds; tests may pin it. */
  clock?: () => number;
}

export interface AcquireOptions {
  resource: string;
  caseId: string;
  taskId: string;
  /** The git revision the client phase validates. */
  revision: string;
  /** How long a grant lives without renewal. */
  ttlMs: number;
  /** How long to wait in line (first come, first served) before giving up with `queue_timeout`. */
  waitTimeoutMs: number;
  /** Defaults to the case id. */
  correlationId?: string;
  /** Idempotency of the acquisition; a fresh ULID by default. */
  requestId?: string;
}

/**
 * A service's handle on the shared-client leases. `acquire`, `renew`, `release` and `bindCapture` are
 * requests to the lease service (it alone appends lease events); `check` is one direct KV read,
 * cheap enough before every click and capture.
 */
export class LeaseClient {
  private readonly clock: () => number;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly kv: KV,
    private readonly opts: LeaseClientOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  /** Binds to the existing bucket: needs direct-get on it, never stream create or consumer permissions. */
  static async connect(nc: NatsConnection, opts: LeaseClientOptions): Promise<LeaseClient> {
    const js = nc.jetstream({ checkAPI: false });
    const kv = await js.views.kv(opts.bucket, { bindOnly: true, allow_direct: true });
    return new LeaseClient(nc, kv, opts);
  }

  /** Is `token` still the holder of `resource`? */
  async check(resource: string, token: number): Promise<LeaseCheck> {
    const entry = await this.kv.get(leaseKey(resource));
    const slot =
      entry && entry.operation === 'PUT'
        ? { revision: entry.revision, record: decodeLeaseRecord(entry.value) }
        : null;
    return standingOf(slot, token, this.clock());
  }

  /** Waits in line for the resource; resolves with the grant or throws a LeaseError. */
  async acquire(o: AcquireOptions): Promise<Lease> {
    const req: AcquireRequest = {
      resource: o.resource,
      caseId: o.caseId,
      taskId: o.taskId,
      revision: o.revision,
      correlationId: o.correlationId ?? o.caseId,
      requestId: o.requestId ?? ulid(),
      ttlMs: o.ttlMs,
      waitTimeoutMs: o.waitTimeoutMs,
    };
    const reply = await this.call(
      'acquire',
      req,
      acquireReply,
      o.waitTimeoutMs + (this.opts.replyMarginMs ?? 5_000),
    );
    if (!reply.ok) throw new LeaseError(reply.code, reply.message);
    return new Lease(this, req, reply.token, reply.expiresAt);
  }

  /** @internal used by Lease */
  async onGrant(
    op: Exclude<LeaseRpcOperation, 'acquire'>,
    body: Record<string, unknown>,
  ): Promise<GrantReply & { ok: true }> {
    const reply = await this.call(
      op,
      { ...body, commandId: ulid() },
      grantReply,
      this.opts.requestTimeoutMs ?? 5_000,
    );
    if (!reply.ok) throw new LeaseError(reply.code, reply.message);
    return reply;
  }

  private async call<S extends z.ZodType>(
    op: LeaseRpcOperation,
    body: unknown,
    schema: S,
    timeout: number,
  ): Promise<z.infer<S>> {
    let msg;
    try {
      msg = await this.nc.request(leaseRpcSubject(this.opts.namespace, op), encodeRpc(body), { timeout });
    } catch (e) {
      const code = (e as { code?: string }).code;
      const why =
        code === '503'
          ? 'no lease service is subscribed'
          : code === 'TIMEOUT'
            ? `no answer within ${timeout} ms`
            : (e as Error).message;
      throw new LeaseError('unavailable', `${op}: ${why}`);
    }
    return decodeRpc(schema, msg.data);
  }
}

/** One grant of a resource. Its token never changes; renewals move `expiresAt`. */
export class Lease {
  readonly resource: string;
  readonly caseId: string;
  readonly taskId: string;
  readonly revision: string;
  readonly requestId: string;
  private readonly correlationId: string;
  private expiry: number;

  constructor(
    private readonly client: LeaseClient,
    req: AcquireRequest,
    readonly token: number,
    expiresAt: number,
  ) {
    this.resource = req.resource;
    this.caseId = req.caseId;
    this.taskId = req.taskId;
    this.revision = req.revision;
    this.requestId = req.requestId;
    this.correlationId = req.correlationId;
    this.expiry = expiresAt;
  }

  /** The recorded expiry (epoch ms) as of the last grant or renewal. */
  get expiresAt(): number {
    return this.expiry;
  }

  check(): Promise<LeaseCheck> {
    return this.client.check(this.resource, this.token);
  }

  /** Extends the grant by `ttlMs` (default: the acquisition's) from now; `holder: false` if it was lost. */
  async renew(ttlMs?: number): Promise<LeaseCheck> {
    const r = await this.client.onGrant('renew', {
      ...this.who(),
      ...(ttlMs !== undefined ? { ttlMs } : {}),
    });
    if (r.holder && r.expiresAt !== null) this.expiry = r.expiresAt;
    return toCheck(r);
  }

  /** Records a capture under this grant; `holder: false` means the capture is not evidence. */
  async bindCapture(captureId: string): Promise<LeaseCheck> {
    return toCheck(await this.client.onGrant('bind', { ...this.who(), captureId }));
  }

  /** Gives the resource back (the next waiter is granted). `standing: 'released'` when it went through. */
  async release(captureIds: readonly string[] = []): Promise<LeaseCheck> {
    return toCheck(await this.client.onGrant('release', { ...this.who(), captureIds: [...captureIds] }));
  }

  private who() {
    return {
      resource: this.resource,
      caseId: this.caseId,
      taskId: this.taskId,
      revision: this.revision,
      correlationId: this.correlationId,
      token: this.token,
    };
  }
}

const toCheck = (r: GrantReply & { ok: true }): LeaseCheck => ({
  holder: r.holder,
  standing: r.standing,
  expiresAt: r.expiresAt,
  currentToken: r.currentToken,
});
