import {
  AckPolicy,
  Consumer,
  DeliverPolicy,
  JetStreamClient,
  JetStreamManager,
  JsMsg,
  nanos,
  ReplayPolicy,
} from 'nats';

/** A fetch of a message the server still counts as pending returned nothing, more than once. */
export class StreamReaderStalled extends Error {
  constructor(
    readonly stream: string,
    readonly position: number,
    readonly pending: number,
  ) {
    super(
      `reading ${stream} stalled at sequence ${position}: ${pending} message(s) pending, none delivered ` +
        '(the consumer was likely lost with its server; open a new reader from this position)',
    );
    this.name = 'StreamReaderStalled';
  }
}

/** How long one fetch waits for messages the server says are pending. */
const PENDING_FETCH_MS = 10_000;
/** Empty fetches in a row, while messages are pending, before the reader gives up. */
const STALLED_AFTER = 2;

export interface StreamReaderOptions {
  stream: string;
  /** First stream sequence to deliver. */
  startSeq: number;
  filterSubject?: string;
  /** Messages per fetch: the bound on what sits in memory (two batches with prefetch). */
  batchSize: number;
}

/**
 * Reads a stream in order with bounded memory: an ephemeral pull consumer (no acks, in memory on the
 * server) from which each fetch asks for at most `batchSize` messages — and never more than are
 * pending, so a fetch completes as soon as they arrive instead of waiting for its expiry.
 * nats.js's ordered consumer is not used: it buffers without limit while the caller is slow.
 */
export class BoundedStreamReader {
  private pending: number;
  private nextSeq: number;
  private emptyWhilePending = 0;

  private constructor(
    private readonly jsm: JetStreamManager,
    private readonly opts: StreamReaderOptions,
    private readonly consumer: Consumer,
    private readonly consumerName: string,
    pending: number,
  ) {
    this.pending = pending;
    this.nextSeq = opts.startSeq;
  }

  static async open(
    js: JetStreamClient,
    jsm: JetStreamManager,
    opts: StreamReaderOptions,
  ): Promise<BoundedStreamReader> {
    const info = await jsm.consumers.add(opts.stream, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, opts.startSeq),
      replay_policy: ReplayPolicy.Instant,
      mem_storage: true,
      inactive_threshold: nanos(120_000),
      ...(opts.filterSubject ? { filter_subject: opts.filterSubject } : {}),
    });
    const consumer = await js.consumers.get(opts.stream, info.name);
    return new BoundedStreamReader(jsm, opts, consumer, info.name, info.num_pending);
  }

  /** Messages not yet delivered to this reader (as of the last message received). */
  get remaining(): number {
    return this.pending;
  }

  /** The next stream sequence this reader will deliver. */
  get position(): number {
    return this.nextSeq;
  }

  /**
   * The next messages in stream order, at most `batchSize`. When nothing is pending it waits up to
   * `waitMs` (≥ 1 s, the server's minimum) for one message and returns what came (possibly nothing).
   * An ephemeral consumer lives on one server: when that server goes (a cluster node lost), fetches
   * return nothing while messages are still pending. Rather than wait forever, the reader throws
   * `StreamReaderStalled` after a few such empty fetches; the caller re-opens from `position`.
   */
  async next(waitMs = 1_000): Promise<JsMsg[]> {
    const wasPending = this.pending;
    const want = wasPending > 0 ? Math.min(this.opts.batchSize, wasPending) : 1;
    const iter = await this.consumer.fetch({
      max_messages: want,
      expires: wasPending > 0 ? PENDING_FETCH_MS : Math.max(1_000, waitMs),
    });
    const out: JsMsg[] = [];
    let received = 0;
    for await (const m of iter) {
      received += 1;
      if (m.seq < this.nextSeq) continue;
      out.push(m);
      this.nextSeq = m.seq + 1;
      this.pending = m.info.pending;
    }
    if (received > 0 || wasPending === 0) this.emptyWhilePending = 0;
    else if (++this.emptyWhilePending >= STALLED_AFTER) {
      throw new StreamReaderStalled(this.opts.stream, this.nextSeq, wasPending);
    }
    return out;
  }

  async close(): Promise<void> {
    try {
      await this.jsm.consumers.delete(this.opts.stream, this.consumerName);
    } catch {
      // The consumer is ephemeral: the server removes it after its inactivity threshold anyway.
    }
  }
}
