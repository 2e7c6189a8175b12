import { createInbox, Events, Msg, MsgHdrs, NatsConnection, NatsError, Subscription } from 'nats';

/** A failed request, with the codes nats.js uses for the same failures (`TIMEOUT`, `503`, `PERMISSIONS_VIOLATION`). */
export class RequestFailed extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RequestFailed';
  }
}

interface Pending {
  subject: string;
  resolve: (m: Msg) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * Requests answered on one wildcard inbox subscription — what nats.js's `request` does, without its
 * cost per request: nats.js settles every answered request by also "cancelling" it, which builds a
 * `NatsError` with a stack trace each time (≈ 7 µs here, a fifth of an append's client CPU). Failures
 * keep nats.js's codes: no answer in time (`TIMEOUT`), no stream listening on the subject (`503`), a
 * publish or the inbox refused by the server's permissions (`PERMISSIONS_VIOLATION`, reported by the
 * server asynchronously and matched to the oldest pending request on that subject, as nats.js does).
 */
export class ReplyInbox {
  private readonly prefix: string;
  private readonly pending = new Map<string, Pending>();
  private sub: Subscription | null = null;
  private next = 0;

  constructor(private readonly nc: NatsConnection) {
    this.prefix = `${createInbox()}.`;
  }

  request(
    subject: string,
    data: Uint8Array,
    { headers, timeoutMs }: { headers?: MsgHdrs; timeoutMs: number },
  ): Promise<Msg> {
    if (this.nc.isClosed())
      return Promise.reject(new RequestFailed('CONNECTION_CLOSED', 'the NATS connection is closed'));
    this.open();
    const token = (this.next++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new RequestFailed('TIMEOUT', `no answer on ${subject} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(token, { subject, resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: this.prefix + token, ...(headers ? { headers } : {}) });
      } catch (e) {
        this.settle(token)?.reject(e as Error);
      }
    });
  }

  /** Requests waiting for an answer (for tests and metrics). */
  get waiting(): number {
    return this.pending.size;
  }

  private open(): void {
    if (this.sub) return;
    this.sub = this.nc.subscribe(`${this.prefix}*`, { callback: (err, msg) => this.deliver(err, msg) });
    void this.watchPermissions();
    // Once the connection is closed, nothing pending will be answered.
    void this.nc
      .closed()
      .then(() => this.failAll(new RequestFailed('CONNECTION_CLOSED', 'the NATS connection closed')));
  }

  private settle(token: string): Pending | undefined {
    const p = this.pending.get(token);
    if (!p) return undefined;
    clearTimeout(p.timer);
    this.pending.delete(token);
    return p;
  }

  private deliver(err: NatsError | null, msg: Msg): void {
    if (err) {
      // The inbox itself was refused: no request can be answered.
      this.failAll(new RequestFailed(err.code ?? 'PERMISSIONS_VIOLATION', err.message));
      this.sub = null;
      return;
    }
    const p = this.settle(msg.subject.slice(this.prefix.length));
    if (!p) return;
    // The server answers a request nobody listens to with a bare 503 status.
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      p.reject(new RequestFailed('503', `no responders on ${p.subject}`));
      return;
    }
    p.resolve(msg);
  }

  /** The server reports a refused publish asynchronously, naming its subject. */
  private async watchPermissions(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type !== Events.Error || !s.permissionContext) continue;
      const ctx = s.permissionContext;
      if (ctx.operation === 'publish') {
        for (const [token, p] of this.pending) {
          if (p.subject !== ctx.subject) continue;
          this.settle(token)?.reject(
            new RequestFailed('PERMISSIONS_VIOLATION', `not allowed to publish ${ctx.subject}`),
          );
          break;
        }
      }
    }
  }

  private failAll(e: Error): void {
    for (const token of [...this.pending.keys()]) this.settle(token)?.reject(e);
  }
}
