import {
  Aggregate,
  aggregateFilter,
  assertSafeId,
  ContractErrorCode,
  encodeEvent,
  EventDraft,
  eventDefinition,
  HEADERS,
  LedgerEvent,
  isContractError,
  isProducer,
  PASSED_OVER_ON_LOAD,
  Producer,
  RecordedEvent,
  subjectFor,
} from '@caseloop/contracts';
import { JetStreamManager, MsgHdrs, NatsConnection, StoredMsg } from 'nats';
import { ConcurrencyError, JS_WRONG_LAST_SEQUENCE, jsErrCode, LedgerError } from './errors';
import { directGet, isNoMessage } from './direct-get';
import { messageHeaders } from './message-headers';
import { readEvent } from './read-event';
import { ReplyInbox } from './reply-inbox';
import { ConnectionState, expectationSlotId, readReplication, StreamReplication } from './replication';
import { ServerFeatures } from './server-features';

/** Only understood by nats-server >= 2.11; 2.9 ignores it silently, so it is sent only when gated in. */
export const EXPECTED_LAST_SUBJECT_SEQ_SUBJECT = 'Nats-Expected-Last-Subject-Sequence-Subject';

export interface CommandMeta {
  aggregate: Aggregate;
  aggregateId: string;
  producer: Producer;
  /** Deterministic per command: event i gets `Nats-Msg-Id` `${commandId}:${i}`, so a retry is deduplicated. */
  commandId: string;
  causationId: string | null;
  correlationId: string;
  occurredAt: string;
}

export interface AppendInput extends CommandMeta {
  events: readonly EventDraft[];
  /** Stream sequence of the last message on this (aggregate, id, producer) subject; 0 = must be empty; omitted = no check. */
  expectedSeq?: number;
  /**
   * Stream sequence of the last message on the whole aggregate (`<ns>.<aggregate>.<id>.*`).
   * Needs nats-server >= 2.11; refused with `feature_unsupported` on older servers instead of being ignored.
   */
  expectedAggregateSeq?: number;
}

export interface AppendResult {
  seqs: number[];
  /** Every event was already recorded (a retried command): `seqs` are the original sequences. */
  duplicate: boolean;
}

export interface LoadOptions {
  /** Only this producer's subject of the aggregate. */
  producer?: Producer;
  /**
   * `tolerate` (default): a message whose break is in `PASSED_OVER_ON_LOAD` (a newer producer's
   * type or version, a forged or unreadable message) is passed over and listed in `passedOver`;
   * any other break (`invalid_payload`) fails the load, naming its sequence.
   * `throw`: every break fails the load.
   * `skip`: every break is passed over — for readers that report such messages on their own (the
   * monitor) and must go on looking at the rest of the aggregate. Never for a load that decides an append.
   */
  undecodable?: 'tolerate' | 'throw' | 'skip';
}

/** A message of the aggregate the load passed over (see `PASSED_OVER_ON_LOAD`). */
export interface PassedOver {
  seq: number;
  subject: string;
  code: ContractErrorCode;
  message: string;
}

export interface LoadedAggregate {
  events: RecordedEvent[];
  lastSeqByProducer: Partial<Record<Producer, number>>;
  /** Stream sequence of the aggregate's last message, 0 when it has none. */
  lastSeq: number;
  /** Messages passed over, in stream order (their subjects' last sequences still count). */
  passedOver: PassedOver[];
}

/**
 * - `producer`: the check covers this producer's own subject (works on every server);
 * - `aggregate`: the check covers the whole aggregate (every producer) — needs >= 2.11;
 * - `strongest`: `aggregate` where the server supports it, else `producer`.
 */
export type Consistency = 'producer' | 'aggregate' | 'strongest';

export interface HandleInput extends CommandMeta {
  /** May be async (it may look things up); it runs again on the fresh load after a conflict. */
  decide: (events: RecordedEvent[]) => readonly EventDraft[] | Promise<readonly EventDraft[]>;
  consistency?: Consistency;
  /** Attempts in total, the first included. */
  maxAttempts?: number;
}

export interface HandleResult {
  appended: RecordedEvent[];
  /** The command had already been handled (its events were found in the aggregate); nothing new was written. */
  alreadyHandled: boolean;
  attempts: number;
}

/** Hooks for metrics; called synchronously, must not throw. */
export interface EventStoreObserver {
  appended?(events: number, duplicate: boolean, ms: number): void;
  conflict?(subject: string): void;
  loaded?(events: number, ms: number): void;
  /** A publish got no answer (or no stream leader) and is sent again with the same message id. */
  retried?(reason: 'timeout' | 'no_leader'): void;
  /** Two appends with one expectation raced and the slot id refused the second (see `expectationSlotId`). */
  raced?(subject: string): void;
  /** The stream's replication as last read (on start and every `replicationRefreshMs`). */
  replication?(r: StreamReplication): void;
  /** A load passed over a message that breaks its contract (it is also dead-lettered by the consumers). */
  passedOver?(entry: PassedOver): void;
}

export interface EventStoreOptions {
  namespace: string;
  stream: string;
  features: ServerFeatures;
  /** How long one append may keep retrying (no answer, no leader) before it fails. */
  timeoutMs?: number;
  /** How long one publish attempt waits for its ack before it is sent again with the same id. */
  attemptTimeoutMs?: number;
  /**
   * Which message id an append with an expectation carries: `event` (its event id), `slot`
   * (`expectationSlotId`: needed on replicated streams of servers with nats-server #4320), or
   * `auto` (default): `slot` exactly when the stream is replicated and the server is older than 2.9.21.
   */
  expectationIds?: 'auto' | 'event' | 'slot';
  /** The connection's state, to tell an outage from a leader election when an append gives up. */
  connection?: () => ConnectionState;
  replicationRefreshMs?: number;
}

export class EventStore {
  readonly namespace: string;
  readonly stream: string;
  private readonly timeoutMs: number;
  private readonly attemptTimeoutMs: number;
  private readonly inbox: ReplyInbox;
  private observers: EventStoreObserver[] = [];
  private replicationState: { value: StreamReplication | null; at: number; pending: Promise<void> | null } = {
    value: null,
    at: 0,
    pending: null,
  };

  constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly opts: EventStoreOptions,
  ) {
    this.namespace = assertSafeId('namespace', opts.namespace);
    this.stream = opts.stream;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.attemptTimeoutMs = Math.min(opts.attemptTimeoutMs ?? 3_000, this.timeoutMs);
    this.inbox = new ReplyInbox(nc);
  }

  /**
   * The stream's replication as the server last reported it (read at most every
   * `replicationRefreshMs`, 5 s by default; null until the stream could be read).
   */
  async replication(maxAgeMs = this.opts.replicationRefreshMs ?? 5_000): Promise<StreamReplication | null> {
    const st = this.replicationState;
    if (st.value && Date.now() - st.at < maxAgeMs) return st.value;
    st.pending ??= readReplication(this.jsm, this.stream, this.features)
      .then((r) => {
        st.value = r;
        st.at = Date.now();
        for (const o of this.observers) o.replication?.(r);
      })
      .catch((e: unknown) => {
        // A stream that cannot be read is not replicated as far as anyone can tell; the last value stays.
        if (st.value) st.value = { ...st.value, leader: null, state: 'no_leader' };
        void e;
      })
      .finally(() => {
        st.pending = null;
      });
    await st.pending;
    return st.value;
  }

  /** Whether appends with an expectation use slot ids (nats-server #4320 on a replicated stream). */
  private async slotIds(): Promise<boolean> {
    const mode = this.opts.expectationIds ?? 'auto';
    if (mode !== 'auto') return mode === 'slot';
    if (this.features.replicatedConcurrency) return false;
    // Replicas rarely change: a minute-old answer is good enough, and the first append pays one read.
    const r = await this.replication(60_000);
    return r?.unserialisedChecks ?? false;
  }

  /** Adds an observer (metrics); returns a function that removes it. */
  observe(observer: EventStoreObserver): () => void {
    this.observers.push(observer);
    return () => {
      this.observers = this.observers.filter((o) => o !== observer);
    };
  }

  get features(): ServerFeatures {
    return this.opts.features;
  }

  /** The envelopes `append` would write, validated: what a caller can show before it appends. */
  build(input: CommandMeta & { events: readonly EventDraft[] }): LedgerEvent[] {
    assertSafeId('commandId', input.commandId);
    return input.events.map((d, i) => {
      const def = eventDefinition(d.type);
      return {
        eventId: `${input.commandId}:${i}`,
        type: d.type,
        version: def?.version ?? 1,
        aggregate: input.aggregate,
        aggregateId: input.aggregateId,
        producer: input.producer,
        commandId: input.commandId,
        causationId: input.causationId,
        correlationId: input.correlationId,
        occurredAt: input.occurredAt,
        data: d.data,
      } as LedgerEvent;
    });
  }

  /**
   * Appends a command's events in order. Event i expects the sequence event i-1 got, so on a
   * crash mid-way a retry with the same command id and expectation is deduplicated up to where it
   * stopped and completes the rest. Everything is encoded (and so validated) before the first publish.
   */
  async append(input: AppendInput): Promise<AppendResult> {
    if (input.events.length === 0) return { seqs: [], duplicate: false };
    if (input.expectedAggregateSeq !== undefined && !this.features.aggregateConcurrency) {
      throw new LedgerError(
        'feature_unsupported',
        `whole-${input.aggregate} concurrency needs nats-server >= 2.11 (connected: ${this.features.version}); it would be silently ignored`,
      );
    }
    const started = performance.now();
    const encoded = this.build(input).map((e) => encodeEvent(this.namespace, e));
    const slots =
      (input.expectedSeq !== undefined || input.expectedAggregateSeq !== undefined) && (await this.slotIds());
    const seqs: number[] = [];
    let allDuplicate = true;
    let expectSubject = input.expectedSeq;
    let expectAggregate = input.expectedAggregateSeq;
    for (const enc of encoded) {
      // The aggregate-wide check, where available, replaces the per-subject one: the header pair
      // redirects `Nats-Expected-Last-Subject-Sequence` to the wildcard subject. The msg id is among
      // the event's headers, so it is not passed again as a publish option.
      const expected = expectAggregate ?? expectSubject;
      const slot =
        slots && expected !== undefined
          ? expectationSlotId(
              expectAggregate !== undefined
                ? aggregateFilter(this.namespace, input.aggregate, input.aggregateId)
                : enc.subject,
              expected,
            )
          : null;
      const h = messageHeaders(
        slot ? { ...enc.headers, [HEADERS.msgId]: slot } : enc.headers,
        expectAggregate !== undefined
          ? {
              [HEADERS.expectedLastSubjectSeq]: String(expectAggregate),
              [EXPECTED_LAST_SUBJECT_SEQ_SUBJECT]: aggregateFilter(
                this.namespace,
                input.aggregate,
                input.aggregateId,
              ),
            }
          : expectSubject !== undefined
            ? { [HEADERS.expectedLastSubjectSeq]: String(expectSubject) }
            : undefined,
      );
      let ack;
      try {
        ack = await this.publish(enc.subject, enc.body, h);
      } catch (e) {
        const mapped = this.mapPublishError(e, enc.subject, expectAggregate ?? expectSubject);
        if (mapped instanceof ConcurrencyError) for (const o of this.observers) o.conflict?.(enc.subject);
        throw mapped;
      }
      if (ack.duplicate && slot) {
        if (!(await this.isOwnCopy(enc.subject, enc.msgId, ack.seq))) {
          for (const o of this.observers) o.raced?.(enc.subject);
          throw new ConcurrencyError(
            enc.subject,
            expected ?? -1,
            `${enc.subject}: another append took the slot after sequence ${expected}`,
          );
        }
      } else if (ack.duplicate) await this.assertSameDuplicate(enc.subject, enc.msgId, ack.seq);
      seqs.push(ack.seq);
      allDuplicate &&= ack.duplicate;
      // Later events of the same command expect the one before: they chain even without a caller expectation.
      if (expectAggregate !== undefined) expectAggregate = ack.seq;
      else expectSubject = ack.seq;
    }
    const ms = performance.now() - started;
    for (const o of this.observers) o.appended?.(seqs.length, allDuplicate, ms);
    return { seqs, duplicate: allDuplicate };
  }

  /**
   * Reads one aggregate in stream order with direct get (`next_by_subj`): no consumer is created,
   * so a reader needs only `$JS.API.DIRECT.GET.<stream>`. Every message passes the envelope-vs-subject
   * check; a bad one surfaces as a ContractError naming its sequence.
   */
  async load(aggregate: Aggregate, aggregateId: string, opts: LoadOptions = {}): Promise<LoadedAggregate> {
    const started = performance.now();
    const filter = opts.producer
      ? subjectFor(this.namespace, aggregate, aggregateId, opts.producer)
      : aggregateFilter(this.namespace, aggregate, aggregateId);
    const events: RecordedEvent[] = [];
    const seen = new Set<string>();
    const lastSeqByProducer: Partial<Record<Producer, number>> = {};
    const passedOver: PassedOver[] = [];
    let lastSeq = 0;
    let from = 1;
    for (;;) {
      let m;
      try {
        m = await this.directGetRetried({ seq: from, next_by_subj: filter });
      } catch (e) {
        if (!isNoMessage(e)) throw this.mapReadError(e);
        // Any replica answers a direct get, from what it has applied: a follower behind the leader
        // (a node just back, a loaded one) has the stream's prefix and misses its tail, so the end
        // of a replicated aggregate is confirmed by the leader. Otherwise a handler would decide on
        // a case without the very event it was delivered, and drop it.
        m = (await this.replicated()) ? await this.leaderGetNext(from, filter) : null;
        if (!m) break;
      }
      lastSeq = m.seq;
      from = m.seq + 1;
      let ev: RecordedEvent;
      try {
        ev = readEvent(m.subject, m.data, m.seq);
      } catch (e) {
        const mode = opts.undecodable ?? 'tolerate';
        if (
          !isContractError(e) ||
          mode === 'throw' ||
          (mode === 'tolerate' && !PASSED_OVER_ON_LOAD.has(e.code))
        )
          throw e;
        const entry: PassedOver = { seq: m.seq, subject: m.subject, code: e.code, message: e.message };
        passedOver.push(entry);
        for (const o of this.observers) o.passedOver?.(entry);
        // The message still moves its subject's last sequence: the next append there must expect it.
        const producer = m.subject.slice(m.subject.lastIndexOf('.') + 1);
        if (isProducer(producer)) lastSeqByProducer[producer] = m.seq;
        continue;
      }
      // A second copy of a recorded event (a command re-sent after the duplicate window without an
      // expectation, or a delivery aimed into the stream) is the same fact: the first one counts.
      // The copy still moves its subject's last sequence, which is what the next append must expect.
      if (!seen.has(ev.eventId)) events.push(ev);
      seen.add(ev.eventId);
      lastSeqByProducer[ev.producer] = m.seq;
    }
    const ms = performance.now() - started;
    for (const o of this.observers) o.loaded?.(events.length, ms);
    return { events, lastSeqByProducer, lastSeq, passedOver };
  }

  /**
   * load → decide → append with the expectation taken from the load; on a conflict, reload and
   * re-decide, a bounded number of times. A command whose events are already in the aggregate is
   * not decided again (idempotent beyond the duplicate window).
   */
  async handle(input: HandleInput): Promise<HandleResult> {
    const maxAttempts = input.maxAttempts ?? 5;
    const consistency = input.consistency ?? 'strongest';
    const aggregateWide =
      consistency === 'aggregate' || (consistency === 'strongest' && this.features.aggregateConcurrency);
    if (consistency === 'aggregate' && !this.features.aggregateConcurrency) {
      throw new LedgerError(
        'feature_unsupported',
        `aggregate consistency needs nats-server >= 2.11 (connected: ${this.features.version})`,
      );
    }
    for (let attempt = 1; ; attempt++) {
      const loaded = await this.load(input.aggregate, input.aggregateId);
      const own = loaded.events.filter(
        (e) => e.commandId === input.commandId && e.producer === input.producer,
      );
      if (own.length > 0) return { appended: own, alreadyHandled: true, attempts: attempt };
      const drafts = await input.decide(loaded.events);
      if (drafts.length === 0) return { appended: [], alreadyHandled: false, attempts: attempt };
      try {
        const res = await this.append({
          ...input,
          events: drafts,
          ...(aggregateWide
            ? { expectedAggregateSeq: loaded.lastSeq }
            : { expectedSeq: loaded.lastSeqByProducer[input.producer] ?? 0 }),
        });
        const subject = subjectFor(this.namespace, input.aggregate, input.aggregateId, input.producer);
        const appended = this.build({ ...input, events: drafts }).map(
          (e, i) => ({ ...e, seq: res.seqs[i] as number, subject }) as RecordedEvent,
        );
        return { appended, alreadyHandled: false, attempts: attempt };
      } catch (e) {
        if (!(e instanceof ConcurrencyError)) throw e;
        if (attempt >= maxAttempts) {
          throw new LedgerError(
            'retries_exhausted',
            `${input.commandId}: still conflicting after ${attempt} attempts`,
            {
              subject: e.subject,
              attempts: attempt,
            },
          );
        }
        // Jitter spreads out writers that lost the same race.
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
      }
    }
  }

  /** Whether the stream has replicas (read at most once a minute, as for slot ids). */
  private async replicated(): Promise<boolean> {
    const r = await this.replication(60_000);
    return (r?.replicas ?? 1) > 1;
  }

  /** `next_by_subj` answered by the stream's leader (the non-direct get), null when there is none. */
  private async leaderGetNext(seq: number, subject: string): Promise<StoredMsg | null> {
    const deadline = Date.now() + this.timeoutMs;
    let wait = 100;
    for (;;) {
      try {
        return await this.jsm.streams.getMessage(this.stream, { seq, next_by_subj: subject } as never);
      } catch (e) {
        if (isNoMessage(e)) return null;
        const code = (e as { code?: string }).code;
        const reason = code === 'TIMEOUT' ? 'timeout' : jsErrCode(e) === 10008 ? 'no_leader' : null;
        if (!reason || Date.now() + wait >= deadline) throw this.mapReadError(e);
        for (const o of this.observers) o.retried?.(reason);
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, 2_000);
      }
    }
  }

  /** Stream sequence of the last message on one producer's subject of an aggregate, 0 if none. */
  async lastSeqOf(aggregate: Aggregate, aggregateId: string, producer: Producer): Promise<number> {
    try {
      const m = await this.directGetRetried({
        last_by_subj: subjectFor(this.namespace, aggregate, aggregateId, producer),
      });
      return m.seq;
    } catch (e) {
      if (isNoMessage(e)) return 0;
      throw this.mapReadError(e);
    }
  }

  /**
   * A JetStream publish is a request to the stream's subject answered by a PubAck (JSON). It is
   * made on the store's own reply inbox rather than with `js.publish`, whose generator, option objects
   * and ack decoding cost ≈ 5 µs of client CPU per append here, or the core `request`, which builds a
   * stack-traced error to cancel every request it has answered (≈ 7 µs): both more under load, when
   * that garbage outlives young collections while hundreds of appends are in flight. An API error in
   * the ack is thrown as js.publish throws it: with `api_error`, which `mapPublishError` reads.
   */
  private async publish(subject: string, body: Uint8Array, headers: MsgHdrs): Promise<PubAckLike> {
    const deadline = Date.now() + this.timeoutMs;
    let wait = 100;
    for (;;) {
      try {
        return await this.publishOnce(subject, body, headers);
      } catch (e) {
        const reason = retryable(e);
        if (!reason) throw e;
        // No responders and no such stream: nothing to wait for.
        if ((e as { code?: string }).code === '503' && (await this.streamMissing())) throw e;
        if (Date.now() + wait >= deadline) throw await this.failover(e, subject, reason);
        // The same headers, so the same message id: if the first attempt was stored after all
        // (its ack lost with the old leader), the retry is answered `duplicate` with its sequence.
        for (const o of this.observers) o.retried?.(reason);
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, 2_000);
      }
    }
  }

  /**
   * An append that kept failing: an outage (no server reachable), a stream without a leader
   * (an election that did not finish), or a server that does not answer.
   */
  private async failover(e: unknown, subject: string, reason: 'timeout' | 'no_leader'): Promise<Error> {
    const conn = this.opts.connection?.() ?? 'connected';
    if (conn !== 'connected') {
      return new LedgerError('not_connected', `no NATS server reachable for ${this.timeoutMs} ms (${conn})`, {
        subject,
      });
    }
    const r = await this.replication(0);
    // A leader whose peers are gone cannot commit: it reports itself leader until it steps down.
    // Nor can one whose followers have been silent while this append waited (the server still calls
    // them current for several seconds after they died).
    const heard = r ? r.current.filter((p) => !r.quiet.includes(p)) : [];
    const noQuorum = r !== null && r.replicas > 1 && heard.length + 1 < Math.floor(r.replicas / 2) + 1;
    if (reason === 'no_leader' || !r || r.leader === null || noQuorum) {
      return new LedgerError(
        'leader_unavailable',
        `${this.stream} has no leader after ${this.timeoutMs} ms (an election that did not finish: is a quorum of nodes up?)`,
        { subject, replicas: r?.replicas ?? null },
      );
    }
    return new LedgerError('timeout', `no ack for ${subject} within ${this.timeoutMs} ms`, {
      subject,
      cause: (e as Error).message,
    });
  }

  private async publishOnce(subject: string, body: Uint8Array, headers: MsgHdrs): Promise<PubAckLike> {
    const m = await this.inbox.request(subject, body, { headers, timeoutMs: this.attemptTimeoutMs });
    let ack: PubAckLike & { error?: { code: number; err_code?: number; description: string } };
    try {
      ack = JSON.parse(ackDecoder.decode(m.data));
    } catch {
      throw new LedgerError('append_refused', `${subject}: the answer is not a JetStream ack`, { subject });
    }
    if (ack.error)
      throw Object.assign(new Error(ack.error.description), {
        code: String(ack.error.code),
        api_error: ack.error,
      });
    if (typeof ack.stream !== 'string' || ack.stream === '' || typeof ack.seq !== 'number') {
      throw new LedgerError('append_refused', `${subject}: the answer is not a JetStream ack`, { subject });
    }
    return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true };
  }

  /**
   * Dedupe is stream-wide and answers with the original's sequence whatever the subject: a command
   * id reused on another aggregate would otherwise pass for success. Duplicates only occur on
   * retries, so the extra read is cheap.
   */
  private async streamMissing(): Promise<boolean> {
    try {
      await this.jsm.streams.info(this.stream);
      return false;
    } catch (e) {
      return jsErrCode(e) === 10059;
    }
  }

  /** In slot mode a duplicate is ours only if the message in the slot is this very event. */
  private async isOwnCopy(subject: string, eventId: string, seq: number): Promise<boolean> {
    // A slot still in flight on the leader may be reported without its sequence: not provably ours.
    if (!(seq > 0)) return false;
    try {
      // Retried like a load: a read that timed out under load is not evidence of a race.
      const original = await this.directGetRetried({ seq });
      if (original.subject !== subject) return false;
      return (JSON.parse(ackDecoder.decode(original.data)) as { eventId?: unknown }).eventId === eventId;
    } catch {
      return false;
    }
  }

  private async assertSameDuplicate(subject: string, msgId: string, seq: number): Promise<void> {
    // Retried like a load (a duplicate answer comes after a resend, often under load or failover).
    let original;
    try {
      original = await this.directGetRetried({ seq });
    } catch (e) {
      throw this.mapReadError(e);
    }
    if (original.subject !== subject || original.header.get(HEADERS.msgId) !== msgId) {
      throw new LedgerError(
        'command_id_reused',
        `${msgId} was already recorded at seq ${seq} on ${original.subject}, not ${subject}`,
        {
          seq,
          msgId,
        },
      );
    }
  }

  private mapPublishError(e: unknown, subject: string, expected: number | undefined): Error {
    if (e instanceof LedgerError) return e;
    if (jsErrCode(e) === JS_WRONG_LAST_SEQUENCE) {
      return new ConcurrencyError(subject, expected ?? -1, `${subject} is past sequence ${expected}`);
    }
    const code = (e as { code?: string }).code;
    if (code === 'PERMISSIONS_VIOLATION' || code === '403') {
      return new LedgerError('permission_denied', `not allowed to publish ${subject}`, { subject });
    }
    if (code === 'TIMEOUT') return new LedgerError('timeout', `no ack for ${subject}`, { subject });
    if (code === '503')
      return new LedgerError('stream_missing', `no stream answers on ${subject}`, { subject });
    return new LedgerError('append_refused', `${subject}: ${(e as Error).message}`, {
      subject,
      jsCode: jsErrCode(e),
    });
  }

  /**
   * A direct get through a node loss: the request may go to a server that just died or to a stream
   * between leaders. It is sent again like an append (same query, growing pause) until the store's
   * timeout, so a load during a leader election waits for it instead of failing the handler.
   */
  private async directGetRetried(query: Parameters<typeof directGet>[2]): ReturnType<typeof directGet> {
    const deadline = Date.now() + this.timeoutMs;
    let wait = 100;
    for (;;) {
      try {
        return await directGet(this.jsm, this.stream, query);
      } catch (e) {
        // No responders (503) means no stream or no direct gets, not an election: not retried.
        const code = (e as { code?: string }).code;
        const reason = code === 'TIMEOUT' ? 'timeout' : jsErrCode(e) === 10008 ? 'no_leader' : null;
        if (!reason || Date.now() + wait >= deadline) throw e;
        for (const o of this.observers) o.retried?.(reason);
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, 2_000);
      }
    }
  }

  private mapReadError(e: unknown): Error {
    const code = (e as { code?: string }).code;
    if (code === 'PERMISSIONS_VIOLATION' || code === '403') {
      return new LedgerError('permission_denied', `not allowed to read ${this.stream}`);
    }
    if (code === 'TIMEOUT') return new LedgerError('timeout', `direct get on ${this.stream} timed out`);
    if (code === '503')
      return new LedgerError(
        'stream_missing',
        `${this.stream} does not answer direct gets (allow_direct off?)`,
      );
    return e as Error;
  }
}

/** Failures an identical resend may cure: no answer in time, no stream leader (an election), no responders. */
function retryable(e: unknown): 'timeout' | 'no_leader' | null {
  const code = (e as { code?: string }).code;
  if (code === 'TIMEOUT') return 'timeout';
  if (code === '503') return 'no_leader';
  // 10008: "JetStream system temporarily unavailable" while the stream's raft group has no leader.
  if (jsErrCode(e) === 10008) return 'no_leader';
  return null;
}

interface PubAckLike {
  stream: string;
  seq: number;
  duplicate: boolean;
}

const ackDecoder = new TextDecoder();
