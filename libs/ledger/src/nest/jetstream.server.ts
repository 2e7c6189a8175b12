import { Producer, RecordedEvent } from '@caseloop/contracts';
import { CustomTransportStrategy, Server } from '@nestjs/microservices';
import {
  AckPolicy,
  ConsumerConfig,
  ConsumerMessages,
  DeliverPolicy,
  JsMsg,
  nanos,
  ReplayPolicy,
  Subscription,
} from 'nats';
import { isObservable, lastValueFrom } from 'rxjs';
import { Ledger } from '../connect';
import { directGet } from '../direct-get';
import { DependencyUnavailable, jsErrCode } from '../errors';
import { readEvent } from '../read-event';
import { consumerDelivery, Delivery, RedriveOutcome, redriveDelivery } from './delivery';
import { JetStreamContext } from './jetstream.context';
import { KeyedScheduler } from './keyed-scheduler';
import { nakDelay, settle } from './settle';

export interface JetStreamServerOptions {
  ledger: Ledger;
  /** Who is consuming: names the dead-letter subject. */
  producer: Producer;
  /** Durable consumer name; defaults to the producer. */
  durable?: string;
  /** Subjects the consumer takes; defaults to every ledger subject of the namespace (`<ns>.*.*.*`). */
  filterSubject?: string;
  ackWaitMs?: number;
  /**
   * How long a running handler's delivery is kept alive (`working()` every half ack wait) before it
   * is left to redeliver; 0 (default): only while it is queued, the handler extends it itself. With
   * a short `ackWaitMs` this makes a process lost mid-handling cost one short ack wait, not the
   * longest a handler may legitimately run.
   */
  keepRunningAliveMs?: number;
  maxDeliver?: number;
  /**
   * An event whose handler fails with `DependencyUnavailable` on its last allowed delivery is held
   * (kept alive with `working()`) and handled again every `nakMaxMs` for up to this long before it
   * is dead-lettered; 0 turns the hold off.
   */
  outageHoldMs?: number;
  /** Aggregates handled in parallel (one event at a time per aggregate). */
  concurrency?: number;
  /** Events accepted and not yet settled; the consume loop waits when full. */
  capacity?: number;
  nakBaseMs?: number;
  nakMaxMs?: number;
  /** How long close() waits for running handlers before giving up on them (they are redelivered). */
  drainTimeoutMs?: number;
  /** Delay between attempts to create the consumer while the stream is missing or unreachable. */
  setupRetryMs?: number;
}

export type JetStreamStatus = 'starting' | 'consuming' | 'waiting_for_stream' | 'stopping' | 'stopped';

export type Settled = 'acked' | 'skipped' | 'retried' | 'dead_lettered';

/** Operators ask a service to handle one dead-lettered event again: `<ns>_redrive.<consumer>`, body `{"seq":N}`. */
export const redriveSubject = (namespace: string, consumer: string): string =>
  `${namespace}_redrive.${consumer}`;
type Events = {
  status: (s: JetStreamStatus) => void;
  dead_letter: (seq: number, reason: string) => void;
  /** Every settlement of a handled (or skipped) event, with the handler's duration. */
  settled: (type: string, outcome: Settled, ms: number) => void;
};

/**
 * A NestJS custom transport over one durable pull consumer on the ledger stream.
 *
 * Handlers are declared with Nest's own `@EventPattern('<EventType>')`; `@Payload()` is the decoded
 * `RecordedEvent`, `@Ctx()` a `JetStreamContext`. Settlement: ack after the handler resolved; events
 * nobody handles are acked; a ContractError, PoisonError or unreadable message is terminated and
 * dead-lettered with its stream sequence; any other error is nak'd with a growing delay, and on the
 * last allowed delivery terminated and dead-lettered too. The loop never stops on a bad message.
 */
export class JetStreamServer extends Server<Events, JetStreamStatus> implements CustomTransportStrategy {
  private readonly ledger: Ledger;
  private readonly durable: string;
  private readonly o: Required<
    Omit<JetStreamServerOptions, 'ledger' | 'producer' | 'durable' | 'filterSubject'>
  >;
  private readonly scheduler: KeyedScheduler;
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private readonly listeners: { [K in keyof Events]: Events[K][] } = {
    status: [],
    dead_letter: [],
    settled: [],
  };
  private current: JetStreamStatus = 'starting';
  /** Stream sequences accepted and not yet settled. */
  private readonly accepted = new Set<number>();
  /** Keep-alives of accepted deliveries: stopped on close, so what is abandoned is redelivered. */
  private readonly heartbeats = new Set<NodeJS.Timeout>();
  private redriveSub: Subscription | null = null;

  constructor(private readonly options: JetStreamServerOptions) {
    super();
    this.ledger = options.ledger;
    this.durable = options.durable ?? options.producer;
    this.o = {
      ackWaitMs: options.ackWaitMs ?? 30_000,
      keepRunningAliveMs: options.keepRunningAliveMs ?? 0,
      maxDeliver: options.maxDeliver ?? 10,
      outageHoldMs: options.outageHoldMs ?? 0,
      concurrency: options.concurrency ?? 8,
      capacity: options.capacity ?? Math.max(64, (options.concurrency ?? 8) * 8),
      nakBaseMs: options.nakBaseMs ?? 1_000,
      nakMaxMs: options.nakMaxMs ?? 60_000,
      drainTimeoutMs: options.drainTimeoutMs ?? 10_000,
      setupRetryMs: options.setupRetryMs ?? 1_000,
    };
    this.scheduler = new KeyedScheduler(this.o.concurrency, this.o.capacity);
  }

  get consumerName(): string {
    return this.durable;
  }

  get state(): JetStreamStatus {
    return this.current;
  }

  /** The consumer this server keeps: its subjects (all of the namespace by default), explicit ack, capped deliveries. */
  consumerConfig(): Partial<ConsumerConfig> {
    return {
      durable_name: this.durable,
      description: `caseloop ${this.options.producer} reactor`,
      filter_subject: this.options.filterSubject ?? `${this.ledger.namespace}.*.*.*`,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(this.o.ackWaitMs),
      max_deliver: this.o.maxDeliver,
      deliver_policy: DeliverPolicy.All,
      replay_policy: ReplayPolicy.Instant,
      max_ack_pending: this.o.capacity,
    };
  }

  listen(callback: (...optionalParams: unknown[]) => unknown): void {
    this.loop = this.run(() => callback());
  }

  async close(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.setStatus('stopping');
    // stop(), not close(): after leaving a named consumer's loop, close() never returns in nats.js 2.29.
    this.messages?.stop();
    this.redriveSub?.unsubscribe();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.scheduler.idle(), this.loop]),
      new Promise<void>((r) => {
        timer = setTimeout(r, this.o.drainTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    // A handler still running past the drain is abandoned: its delivery goes to whoever consumes next.
    for (const h of this.heartbeats) clearInterval(h);
    this.heartbeats.clear();
    // Acks are fire-and-forget publishes: make sure the server has them before the connection goes.
    if (!this.ledger.nc.isClosed()) await this.ledger.nc.flush().catch(() => undefined);
    this.setStatus('stopped');
  }

  on<K extends keyof Events>(event: K, callback: Events[K]): void {
    this.listeners[event].push(callback);
  }

  unwrap<T>(): T {
    return this.ledger.nc as T;
  }

  private setStatus(s: JetStreamStatus): void {
    this.current = s;
    this._status$.next(s);
    this.listeners.status.forEach((l) => l(s));
  }

  /**
   * Startup does not wait for the stream: a service may boot before provisioning ran. It reports
   * `waiting_for_stream` (health says not ready) and keeps trying.
   */
  private async run(ready: () => void): Promise<void> {
    let announced = false;
    while (!this.stopping) {
      try {
        await this.ensureConsumer();
        const consumer = await this.ledger.js.consumers.get(this.ledger.stream, this.durable);
        this.messages = await consumer.consume({ max_messages: Math.min(256, this.o.capacity) });
        if (this.stopping) {
          this.messages.stop();
          break;
        }
        this.setStatus('consuming');
        this.listenForRedrives();
        if (!announced) ready();
        announced = true;
        for await (const m of this.messages) {
          await this.scheduler.admit();
          this.schedule(m);
          if (this.stopping) break;
        }
      } catch (e) {
        if (this.stopping) break;
        this.logger.warn(
          `consumer ${this.durable} on ${this.ledger.stream}: ${(e as Error).message}; retrying`,
        );
      }
      if (this.stopping) break;
      this.setStatus('waiting_for_stream');
      if (!announced) {
        ready();
        announced = true;
      }
      await new Promise((r) => setTimeout(r, this.o.setupRetryMs));
    }
  }

  /**
   * An event queued behind a slow handler of its own aggregate keeps its delivery alive
   * (`working()`), so it is not redelivered while it waits; once it runs, only the handler extends
   * it, or, with `keepRunningAliveMs`, the server for at most that long.
   */
  private schedule(msg: JsMsg): void {
    const m = consumerDelivery(msg, this.ledger.features.termWithReason);
    // A redelivery of an event whose earlier delivery is still queued or running (a hung or slow
    // handler that did not call working()) is left alone: the running one settles it, or the server
    // keeps redelivering until max_deliver and advises MAX_DELIVERIES.
    if (this.accepted.has(m.seq)) return;
    this.accepted.add(m.seq);
    let runningSince = 0;
    const heartbeat = setInterval(
      () => {
        if (runningSince && performance.now() - runningSince > this.o.keepRunningAliveMs) {
          stop();
          return;
        }
        try {
          m.working();
        } catch {
          // The connection is closing; the server will redeliver what was not settled.
        }
      },
      Math.max(500, Math.floor(this.o.ackWaitMs / 2)),
    );
    // A queued event must not keep a stopping process alive.
    heartbeat.unref();
    this.heartbeats.add(heartbeat);
    const stop = () => {
      clearInterval(heartbeat);
      this.heartbeats.delete(heartbeat);
    };
    this.scheduler.schedule(aggregateKey(m.subject), async () => {
      if (this.o.keepRunningAliveMs > 0) runningSince = performance.now();
      else stop();
      try {
        await this.process(m);
      } finally {
        stop();
        this.accepted.delete(m.seq);
      }
    });
  }

  /**
   * Re-drive: the event is read back by sequence and handled like a delivery, queued behind its
   * aggregate like any other. The reply says how it settled; the original dead letter stays on record.
   */
  private listenForRedrives(): void {
    if (this.redriveSub) return;
    const enc = new TextEncoder();
    this.redriveSub = this.ledger.nc.subscribe(redriveSubject(this.ledger.namespace, this.durable), {
      callback: (err, msg) => {
        if (err) return;
        const reply = (body: Record<string, unknown>) => msg.respond(enc.encode(JSON.stringify(body)));
        let seq: number;
        try {
          seq = (JSON.parse(new TextDecoder().decode(msg.data)) as { seq: unknown }).seq as number;
          if (!Number.isSafeInteger(seq) || seq < 1) throw new Error('seq must be a positive integer');
        } catch (e) {
          reply({ error: `bad redrive request: ${(e as Error).message}` });
          return;
        }
        if (this.stopping) return void reply({ seq, error: 'stopping' });
        directGet(this.ledger.jsm, this.ledger.stream, { seq }).then(
          (stored) => {
            if (this.accepted.has(seq)) return void reply({ seq, error: 'already in flight' });
            this.accepted.add(seq);
            let outcome: RedriveOutcome = 'failed';
            const d = redriveDelivery(stored, (o) => (outcome = o));
            this.scheduler.schedule(aggregateKey(stored.subject), async () => {
              try {
                await this.process(d);
              } finally {
                this.accepted.delete(seq);
                reply({ seq, outcome });
              }
            });
          },
          (e: unknown) => reply({ seq, error: `cannot read seq ${seq}: ${(e as Error).message}` }),
        );
      },
    });
  }

  private async ensureConsumer(): Promise<void> {
    const want = this.consumerConfig();
    try {
      await this.ledger.jsm.consumers.add(this.ledger.stream, want);
    } catch (e) {
      // 10148 / 10013: exists with another config. Converge what may change in place.
      const code = jsErrCode(e);
      if (code !== 10148 && code !== 10013 && code !== 10105) throw e;
      const info = await this.ledger.jsm.consumers.info(this.ledger.stream, this.durable);
      if (info.config.filter_subject !== want.filter_subject || info.config.ack_policy !== want.ack_policy) {
        throw new Error(
          `consumer ${this.durable} exists with another filter or ack policy; delete it to change them`,
        );
      }
      await this.ledger.jsm.consumers.update(this.ledger.stream, this.durable, {
        ack_wait: want.ack_wait,
        max_deliver: want.max_deliver,
        max_ack_pending: want.max_ack_pending,
        description: want.description,
      });
    }
  }

  private async process(m: Delivery): Promise<void> {
    let event: RecordedEvent;
    try {
      event = readEvent(m.subject, m.data, m.seq);
    } catch (e) {
      await this.deadLetter(m, null, e);
      this.emitSettled('(unreadable)', 'dead_lettered', 0);
      return;
    }
    const handler = this.getHandlerByPattern(event.type);
    if (!handler) {
      m.skip();
      this.emitSettled(event.type, 'skipped', 0);
      return;
    }
    const started = performance.now();
    const run = async () => {
      const result = await handler(event, new JetStreamContext([m, event, this.durable]));
      if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
    };
    try {
      await run();
      m.ack();
      this.emitSettled(event.type, 'acked', performance.now() - started);
    } catch (first) {
      let e = first;
      const s = settle(e);
      const delivery = m.deliveryCount;
      if (s.kind === 'poison') {
        await this.deadLetter(m, event, e);
        this.emitSettled(event.type, 'dead_lettered', performance.now() - started);
      } else if (delivery >= this.o.maxDeliver && !m.redrive) {
        if (e instanceof DependencyUnavailable && this.o.outageHoldMs > 0) {
          const held = await this.holdThroughOutage(m, event.type, run, e);
          if (held.outcome !== 'failed') return;
          e = held.error;
          if (settle(e).kind === 'poison') {
            await this.deadLetter(m, event, e);
            this.emitSettled(event.type, 'dead_lettered', performance.now() - started);
            return;
          }
        }
        await this.deadLetter(m, event, e, `retries_exhausted after ${delivery} deliveries`);
        this.emitSettled(event.type, 'dead_lettered', performance.now() - started);
      } else {
        const ms = performance.now() - started;
        const delay = nakDelay(delivery, this.o.nakBaseMs, this.o.nakMaxMs);
        this.logger.warn(
          `${event.type} seq ${m.seq} delivery ${delivery} failed: ${s.reason}; retry in ${delay} ms`,
        );
        m.nak(delay);
        this.emitSettled(event.type, 'retried', ms);
      }
    }
  }

  /**
   * The last delivery failed because a dependency is down: rather than dead-letter an event nothing
   * is wrong with, keep its delivery alive and handle it again every `nakMaxMs` until it succeeds,
   * fails otherwise, the outage outlasts `outageHoldMs`, or the server stops (then it is left
   * unsettled, as a crash would leave it).
   */
  private async holdThroughOutage(
    m: Delivery,
    type: string,
    run: () => Promise<void>,
    first: DependencyUnavailable,
  ): Promise<{ outcome: 'handled' } | { outcome: 'stopping' } | { outcome: 'failed'; error: unknown }> {
    const since = performance.now();
    let error: unknown = first;
    this.logger.warn(
      `${type} seq ${m.seq}: ${first.dependency} unavailable on its last delivery (${first.message}); ` +
        `held and tried again every ${this.o.nakMaxMs} ms for up to ${this.o.outageHoldMs} ms`,
    );
    while (error instanceof DependencyUnavailable && performance.now() - since < this.o.outageHoldMs) {
      const until = performance.now() + this.o.nakMaxMs;
      let lastBeat = 0;
      while (performance.now() < until) {
        if (this.stopping) return { outcome: 'stopping' };
        if (performance.now() - lastBeat >= this.o.ackWaitMs / 3) {
          lastBeat = performance.now();
          try {
            m.working();
          } catch {
            // the connection is closing: the server redelivers what was not settled
          }
        }
        await new Promise((r) => setTimeout(r, Math.min(250, this.o.nakMaxMs)));
      }
      const started = performance.now();
      try {
        await run();
        m.ack();
        this.emitSettled(type, 'acked', performance.now() - started);
        this.logger.log(
          `${type} seq ${m.seq}: handled after ${Math.round(performance.now() - since)} ms held`,
        );
        return { outcome: 'handled' };
      } catch (e) {
        error = e;
        this.emitSettled(type, 'retried', performance.now() - started);
      }
    }
    return { outcome: 'failed', error };
  }

  private emitSettled(type: string, outcome: Settled, ms: number): void {
    for (const l of this.listeners.settled) l(type, outcome, ms);
  }

  /** Records first, then terminates: if the record fails the message comes back and is recorded then. */
  private async deadLetter(
    m: Delivery,
    event: RecordedEvent | null,
    error: unknown,
    prefix?: string,
  ): Promise<void> {
    const s = settle(error);
    const code = s.kind === 'poison' ? s.code : 'retries_exhausted';
    const reason = prefix ? `${prefix}: ${s.reason}` : s.reason;
    try {
      await this.ledger.deadLetters.record({
        stream: this.ledger.stream,
        streamSeq: m.seq,
        subject: m.subject,
        consumer: this.durable,
        producer: this.options.producer,
        reason,
        code,
        deliveryCount: m.deliveryCount,
        eventType: event?.type ?? null,
        recordedAt: new Date().toISOString(),
      });
    } catch (e) {
      this.logger.error(`dead letter for seq ${m.seq} not recorded (${(e as Error).message}); will retry`);
      m.nak(this.o.nakBaseMs);
      return;
    }
    this.logger.error(`dead-lettered seq ${m.seq} (${code}): ${reason}`);
    m.term(`${code}: ${reason}`);
    this.listeners.dead_letter.forEach((l) => l(m.seq, reason));
  }
}

/** `<ns>.<aggregate>.<id>.<producer>` → `<aggregate>.<id>`; read from the subject so even unreadable bodies queue correctly. */
function aggregateKey(subject: string): string {
  const parts = subject.split('.');
  return parts.length === 4 ? `${parts[1]}.${parts[2]}` : subject;
}
