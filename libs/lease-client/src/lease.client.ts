import { KV, NatsConnection } from 'nats';
import { ulid } from 'ulid';
import { z } from 'zod';
import { LeaseError } from './lease.errors';
import {
  decodeLeaseRecord,
  decodeLeaseRequest,
  LeaseCheck,
  leaseKey,
  LeaseRequestRecord,
  requestKey,
  standingOf,
} from '@caseloop/lease-model';
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
  /** Timeout of one renew, release, bind or claim call. */
  requestTimeoutMs?: number;
  /** How long those calls are retried while no lease service is subscribed (a restart). */
  retryMs?: number;
  /** How much longer than `waitTimeoutMs` an acquisition waits for the service's answer. */
  replyMarginMs?: number;
  /** How often a queued acquisition reads its request entry (one direct get). */
  pollMs?: number;
  /** How long after an unanswered or unrecorded acquisition it is sent again (the same request id). */
  resendMs?: number;
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

  /**
   * Waits in line for the resource; resolves with the grant or throws a LeaseError.
   *
   * The request goes to whichever lease service process answers; a queued request's outcome is then
   * read from its entry in the bucket (`request.<requestId>`), which any lease process writes — so a
   * lease service restarted between request and grant delays the grant by its restart, nothing more.
   * The request is sent again (same id, idempotent) while no process has put it in line. The grant is
   * claimed before it is returned: a grant nobody claims is released by the service as unused.
   */
  async acquire(o: AcquireOptions): Promise<Lease> {
    const first: AcquireRequest = {
      resource: o.resource,
      caseId: o.caseId,
      taskId: o.taskId,
      revision: o.revision,
      correlationId: o.correlationId ?? o.caseId,
      requestId: o.requestId ?? ulid(),
      ttlMs: o.ttlMs,
      waitTimeoutMs: o.waitTimeoutMs,
    };
    const waitUntil = this.clock() + o.waitTimeoutMs;
    const giveUpAt = waitUntil + (this.opts.replyMarginMs ?? 5_000);
    let req = first;
    for (;;) {
      const grant = await this.awaitGrant(req, giveUpAt);
      if (grant !== 'lapsed') {
        const lease = new Lease(this, req, grant.token, grant.expiresAt);
        if ((await this.claim(lease, req.requestId)) === 'claimed') return lease;
      }
      // The grant lapsed before this client could claim it (typically: the lease service restarted
      // in between and released it as unclaimed, or it expired meanwhile). It was never used, so the
      // request goes back in line under a new id (the old one is settled) for the time that is left.
      const left = waitUntil - this.clock();
      if (left <= 0)
        throw new LeaseError(
          'unavailable',
          'acquire: the grant lapsed before it was claimed, and the wait is over',
        );
      req = { ...first, requestId: ulid(), waitTimeoutMs: left };
    }
  }

  /** The grant, or `lapsed` when the request's grant ended (unclaimed or expired) before it was claimed. */
  private async awaitGrant(
    req: AcquireRequest,
    giveUpAt: number,
  ): Promise<{ token: number; expiresAt: number } | 'lapsed'> {
    const pollMs = this.opts.pollMs ?? 200;
    const resendMs = this.opts.resendMs ?? 2_000;
    let sentAt = -Infinity;
    let lastFailure = 'no lease service answered';
    for (;;) {
      if (this.nc.isClosed()) throw new LeaseError('unavailable', 'acquire: the connection is closed');
      const entry = await this.readRequest(req.requestId).catch(() => null);
      const outcome = entry ? outcomeOf(entry) : null;
      if (outcome) return outcome;
      if (!entry && this.clock() - sentAt >= resendMs) {
        sentAt = this.clock();
        try {
          const reply = await this.call('acquire', req, acquireReply, this.opts.requestTimeoutMs ?? 5_000);
          if (!reply.ok) throw new LeaseError(reply.code, reply.message);
          if (!('queued' in reply)) return { token: reply.token, expiresAt: reply.expiresAt };
          continue;
        } catch (e) {
          if (!(e instanceof LeaseError) || e.code !== 'unavailable') throw e;
          lastFailure = e.message;
        }
      }
      if (this.clock() >= giveUpAt)
        throw new LeaseError('unavailable', `acquire: no grant or refusal in time (${lastFailure})`);
      await sleep(pollMs);
    }
  }

  /**
   * Claims the grant, retrying across a lease service restart while the grant lasts. `lapsed`: the
   * grant is no longer this caller's to use (released as unclaimed, expired, or taken over) or no
   * lease service could be reached before it expired.
   */
  private async claim(lease: Lease, requestId: string): Promise<'claimed' | 'lapsed'> {
    const body = { ...lease.binding(), requestId };
    for (;;) {
      let reply: GrantReply;
      try {
        reply = await this.call(
          'claim',
          { ...body, commandId: ulid() },
          grantReply,
          this.opts.requestTimeoutMs ?? 5_000,
        );
      } catch (e) {
        if (!(e instanceof LeaseError) || this.nc.isClosed()) throw e;
        // no lease service right now: try again while the grant can still be claimed
        if (this.clock() < lease.expiresAt) {
          await sleep(this.opts.pollMs ?? 200);
          continue;
        }
        return 'lapsed';
      }
      if (!reply.ok) throw new LeaseError(reply.code, reply.message);
      return reply.holder ? 'claimed' : 'lapsed';
    }
  }

  private async readRequest(requestId: string): Promise<LeaseRequestRecord | null> {
    const entry = await this.kv.get(requestKey(requestId));
    return entry && entry.operation === 'PUT' ? decodeLeaseRequest(entry.value) : null;
  }

  /**
   * @internal used by Lease. Retried (same command id, so at most once in effect) while no lease
   * service is subscribed, for up to `retryMs` (15 s): a restarting service costs a delay, not an error.
   */
  async onGrant(
    op: Exclude<LeaseRpcOperation, 'acquire'>,
    body: Record<string, unknown>,
  ): Promise<GrantReply & { ok: true }> {
    const timeout = this.opts.requestTimeoutMs ?? 5_000;
    const until = this.clock() + (this.opts.retryMs ?? 15_000);
    const request = { ...body, commandId: ulid() };
    for (;;) {
      let reply: GrantReply;
      try {
        reply = await this.call(op, request, grantReply, timeout);
      } catch (e) {
        if (e instanceof NoResponders && this.clock() < until && !this.nc.isClosed()) {
          await sleep(this.opts.pollMs ?? 200);
          continue;
        }
        throw e;
      }
      if (!reply.ok) throw new LeaseError(reply.code, reply.message);
      return reply;
    }
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
      throw code === '503' ? new NoResponders(op, why) : new LeaseError('unavailable', `${op}: ${why}`);
    }
    return decodeRpc(schema, msg.data);
  }
}

/** No lease service is subscribed right now (it may be restarting). */
class NoResponders extends LeaseError {
  constructor(op: string, why: string) {
    super('unavailable', `${op}: ${why}`);
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

  /** @internal */
  binding() {
    return this.who();
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A request entry that settles the acquisition: the grant, `lapsed` (a grant never claimed), or the refusal as a LeaseError. */
function outcomeOf(r: LeaseRequestRecord): { token: number; expiresAt: number } | 'lapsed' | null {
  switch (r.status) {
    case 'queued':
      return null;
    case 'granted':
      return { token: r.token, expiresAt: r.expiresAt };
    case 'refused':
      throw new LeaseError(r.code, r.message);
    case 'ended':
      // Ended before its claim, so never used: unclaimed (released as unused) or expired.
      if (r.how !== 'released') return 'lapsed';
      throw new LeaseError('unavailable', `acquire: the grant ended before it was claimed (${r.how})`);
  }
}
