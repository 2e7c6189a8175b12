import { RecordedEvent } from '@caseloop/contracts';
import { eventually } from '@caseloop/testing';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { listConsumerDeadLetters, redriveConsumerDeadLetter } from '../consumer-dead-letters';
import { DependencyUnavailable, PoisonError, TransientError } from '../errors';
import { finding, leaseRequested, meta, testLedger, TestLedger, withTask } from '../../test/ledger.fixture';
import { JetStreamExceptionFilter } from './jetstream-exception.filter';
import { JetStreamContext } from './jetstream.context';
import { JetStreamServer, JetStreamServerOptions } from './jetstream.server';

jest.setTimeout(90_000);

interface Call {
  seq: number;
  aggregateId: string;
  taskId: string;
  delivery: number;
  start: number;
  end: number;
}

/** Behaviour is chosen by the event's taskId, so one handler covers every scenario. */
class Probe {
  calls: Call[] = [];
  releaseHang: (() => void) | null = null;
  /** While true, `Toutage` events fail as if the object store were down. */
  outage = true;
  async handle(e: RecordedEvent, ctx: JetStreamContext): Promise<void> {
    if (e.type !== 'LeaseRequested') throw new Error('unexpected');
    const call: Call = {
      seq: ctx.seq,
      aggregateId: e.aggregateId,
      taskId: e.data.taskId,
      delivery: ctx.deliveryCount,
      start: Date.now(),
      end: 0,
    };
    this.calls.push(call);
    const kind = e.data.taskId.replace(/\d+$/, '');
    try {
      switch (kind) {
        case 'Ttransient':
          if (ctx.deliveryCount < 3) throw new TransientError('upstream busy');
          return;
        case 'Tboom':
          throw new Error('always fails');
        case 'Toutage':
          if (this.outage)
            throw new DependencyUnavailable('object store', 'connect ECONNREFUSED 127.0.0.1:9');
          return;
        case 'Tpoison':
          throw new PoisonError('this event can never be handled');
        case 'Tfixed':
          // Poison until an operator fixed the cause and re-drove it.
          if (!ctx.redrive) throw new PoisonError('missing configuration');
          return;
        case 'Tslow':
          ctx.working();
          await new Promise((r) => setTimeout(r, 40));
          return;
        case 'Tlong':
          await new Promise((r) => setTimeout(r, 700));
          return;
        case 'Tlonger':
          await new Promise((r) => setTimeout(r, 2_500));
          return;
        case 'Thangonce':
          // A process that dies while handling: its first delivery never settles.
          if (ctx.deliveryCount === 1) await new Promise<void>((r) => (this.releaseHang = r));
          return;
        case 'Thang':
          await new Promise<void>((r) => {
            this.releaseHang = r;
          });
          return;
        default:
          return;
      }
    } finally {
      call.end = Date.now();
    }
  }
}

async function startReactor(t: TestLedger, opts: Partial<JetStreamServerOptions> = {}) {
  const probe = new Probe();
  @Controller()
  class LeaseReactor {
    @EventPattern('LeaseRequested')
    onRequested(@Payload() e: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
      return probe.handle(e, ctx);
    }
  }
  @Module({ controllers: [LeaseReactor] })
  class ReactorModule {}
  const server = new JetStreamServer({
    ledger: t.ledger,
    producer: 'coordinator',
    durable: 'reactor',
    nakBaseMs: 20,
    nakMaxMs: 100,
    drainTimeoutMs: 2_000,
    ...opts,
  });
  const app: INestMicroservice = await NestFactory.createMicroservice(ReactorModule, {
    strategy: server,
    logger: false,
  });
  app.useGlobalFilters(new JetStreamExceptionFilter());
  await app.listen();
  await eventually(() => server.state === 'consuming', { what: 'consumer running' });
  return { app, server, probe };
}

const ackFloor = async (t: TestLedger) =>
  (await t.ledger.jsm.consumers.info(t.stream, 'reactor')).ack_floor.stream_seq;
const enc = new TextEncoder();

describe('JetStream transport', () => {
  let t: TestLedger;
  let r: Awaited<ReturnType<typeof startReactor>>;
  beforeAll(async () => {
    t = await testLedger();
    r = await startReactor(t, { maxDeliver: 4 });
  });
  afterAll(async () => {
    await r.app.close();
    await t.cleanup();
  });

  it('creates a durable explicit-ack consumer over every ledger subject of the namespace', async () => {
    const info = await t.ledger.jsm.consumers.info(t.stream, 'reactor');
    expect(info.config).toMatchObject({
      durable_name: 'reactor',
      ack_policy: 'explicit',
      filter_subject: `${t.namespace}.*.*.*`,
      max_deliver: 4,
    });
  });

  it('delivers decoded events to @EventPattern handlers and acks after they resolve', async () => {
    const { seqs } = await t.ledger.store.append({
      ...meta('Cok', 'ok-1'),
      events: [leaseRequested(1)],
      expectedSeq: 0,
    });
    await eventually(() => r.probe.calls.some((c) => c.seq === seqs[0]));
    const call = r.probe.calls.find((c) => c.seq === seqs[0]);
    expect(call).toMatchObject({ aggregateId: 'Cok', taskId: 'T1', delivery: 1 });
    await eventually(async () => (await ackFloor(t)) >= (seqs[0] as number), { what: 'acked' });
  });

  it('acks events nobody handles', async () => {
    const { seqs } = await t.ledger.store.append({
      ...meta('Cnone', 'none-1'),
      producer: 'monitor',
      events: [finding(1)],
    });
    await eventually(async () => (await ackFloor(t)) >= (seqs[0] as number), {
      what: 'unhandled event acked',
    });
  });

  it('redelivers with a delay after a transient error', async () => {
    const tr = await t.ledger.store.append({
      ...meta('Ctrans2', 'tr-2'),
      events: [withTask('Ttransient1')],
    });
    await eventually(() => r.probe.calls.filter((c) => c.seq === tr.seqs[0]).length === 3, {
      what: 'three deliveries',
    });
    const deliveries = r.probe.calls.filter((c) => c.seq === tr.seqs[0]);
    expect(deliveries.map((c) => c.delivery)).toEqual([1, 2, 3]);
    // nak(delay): the retry waited at least the first back-off step.
    expect((deliveries[1]?.start ?? 0) - (deliveries[0]?.end ?? 0)).toBeGreaterThanOrEqual(15);
    await eventually(async () => (await ackFloor(t)) >= (tr.seqs[0] as number), {
      what: 'acked after success',
    });
  });

  it('dead-letters poison without stopping and without touching recorded events', async () => {
    const subj = (id: string, producer = 'lease') => `${t.namespace}.case.${id}.${producer}`;
    const valid = t.ledger.store.build({ ...meta('Cp4', 'p4'), events: [leaseRequested(4)] })[0];
    const poison: Record<string, number> = {};
    poison.malformed = (await t.ledger.js.publish(subj('Cp1'), enc.encode('{"type": "LeaseReq'))).seq;
    poison.unknownType = (
      await t.ledger.js.publish(
        subj('Cp2'),
        enc.encode(JSON.stringify({ ...valid, aggregateId: 'Cp2', type: 'LeaseStolen' })),
      )
    ).seq;
    poison.unknownVersion = (
      await t.ledger.js.publish(
        subj('Cp3'),
        enc.encode(JSON.stringify({ ...valid, aggregateId: 'Cp3', version: 99 })),
      )
    ).seq;
    // Envelope says case Cp4, subject says Cp5.
    poison.mismatch = (await t.ledger.js.publish(subj('Cp5'), enc.encode(JSON.stringify(valid)))).seq;
    poison.oversized = (
      await t.ledger.js.publish(
        subj('Cp6'),
        enc.encode(JSON.stringify({ ...valid, aggregateId: 'Cp6', pad: 'x'.repeat(70_000) })),
      )
    ).seq;
    const handlerPoison = await t.ledger.store.append({
      ...meta('Cp7', 'p7'),
      events: [withTask('Tpoison1')],
    });
    poison.handler = handlerPoison.seqs[0] as number;
    const after = await t.ledger.store.append({ ...meta('Cafter', 'after-1'), events: [leaseRequested(9)] });

    await eventually(() => r.probe.calls.some((c) => c.seq === after.seqs[0]), {
      what: 'consumer still running',
    });
    const dead = await eventually(
      async () => {
        const all = await listConsumerDeadLetters(t.ledger.jsm, t.stream);
        const records = all.filter((d) => d.source === 'record');
        const terminated = all.filter((d) => d.source === 'terminated');
        const complete = Object.values(poison).every(
          (seq) => records.some((d) => d.streamSeq === seq) && terminated.some((d) => d.streamSeq === seq),
        );
        if (!complete) throw new Error(`${records.length} records, ${terminated.length} advisories so far`);
        return all;
      },
      { what: 'dead letters for every poison message', timeoutMs: 20_000 },
    );
    const code = (seq: number) => dead.find((d) => d.source === 'record' && d.streamSeq === seq)?.code;
    expect(code(poison.malformed as number)).toBe('malformed_json');
    expect(code(poison.unknownType as number)).toBe('unknown_event_type');
    expect(code(poison.unknownVersion as number)).toBe('unknown_event_version');
    expect(code(poison.mismatch as number)).toBe('subject_mismatch');
    expect(code(poison.oversized as number)).toBe('oversized_event');
    expect(code(poison.handler as number)).toBe('poison');
    expect(dead.every((d) => d.stream === t.stream && d.consumer === 'reactor')).toBe(true);
    // Each was handed to the handler at most once: terminated, not retried.
    expect(r.probe.calls.filter((c) => c.seq === poison.handler)).toHaveLength(1);
    // Terminated, not left to redeliver: nothing of them is pending.
    await eventually(
      async () => (await t.ledger.jsm.consumers.info(t.stream, 'reactor')).num_ack_pending === 0,
      {
        what: 'nothing pending',
      },
    );
    // The ledger still holds every one of them, byte for byte.
    const m = await t.ledger.jsm.streams.getMessage(t.stream, { seq: poison.malformed as number });
    expect(new TextDecoder().decode(m.data)).toBe('{"type": "LeaseReq');
    const info = await t.ledger.jsm.streams.info(t.stream);
    expect(info.state.messages).toBe(info.state.last_seq);
  });

  it('dead-letters an event whose handler keeps failing after max_deliver attempts', async () => {
    const boom = await t.ledger.store.append({
      ...meta('Cboom', 'boom-1'),
      events: [withTask('Tboom1')],
    });
    const seq = boom.seqs[0] as number;
    await eventually(
      async () =>
        (await listConsumerDeadLetters(t.ledger.jsm, t.stream)).some(
          (d) => d.streamSeq === seq && d.code === 'retries_exhausted',
        ),
      { what: 'retries_exhausted dead letter', timeoutMs: 20_000 },
    );
    expect(r.probe.calls.filter((c) => c.seq === seq).map((c) => c.delivery)).toEqual([1, 2, 3, 4]);
  });

  it('re-drives a dead letter on request: handled again once, the original record kept', async () => {
    const { seqs } = await t.ledger.store.append({
      ...meta('Credrive', 'redrive-1'),
      events: [withTask('Tfixed1')],
    });
    const seq = seqs[0] as number;
    await eventually(async () =>
      (await listConsumerDeadLetters(t.ledger.jsm, t.stream)).some(
        (d) => d.streamSeq === seq && d.code === 'poison',
      ),
    );
    const redrive = (s: number) =>
      redriveConsumerDeadLetter(t.ledger.nc, {
        namespace: t.namespace,
        consumer: 'reactor',
        seq: s,
        timeoutMs: 10_000,
      });
    expect(await redrive(seq)).toEqual({ seq, outcome: 'acked' });
    const calls = r.probe.calls.filter((c) => c.seq === seq);
    expect(calls).toHaveLength(2);
    // An unreadable message is still unreadable: dead-lettered again, never handed to a handler.
    const bad = await t.ledger.js.publish(
      `${t.namespace}.case.Credrive2.lease`,
      new TextEncoder().encode('nope'),
    );
    await eventually(async () =>
      (await listConsumerDeadLetters(t.ledger.jsm, t.stream)).some((d) => d.streamSeq === bad.seq),
    );
    expect(await redrive(bad.seq)).toEqual({ seq: bad.seq, outcome: 'dead_lettered' });
    await expect(redrive(999_999)).rejects.toThrow(/cannot read seq 999999/);
    const all = await listConsumerDeadLetters(t.ledger.jsm, t.stream);
    expect(all.filter((d) => d.streamSeq === seq && d.source === 'record')).toHaveLength(1);
    const lastSeen = all[all.length - 2]?.dlqSeq as number;
    expect(await listConsumerDeadLetters(t.ledger.jsm, t.stream, { fromSeq: lastSeen + 1 })).toEqual(
      all.slice(-1),
    );
  });

  it('serializes handlers per case and runs different cases in parallel', async () => {
    const slow = (n: number) => withTask(`Tslow${n}`, n);
    await Promise.all([
      t.ledger.store.append({ ...meta('Cser1', 'ser-1'), events: [1, 2, 3, 4, 5].map(slow) }),
      t.ledger.store.append({ ...meta('Cser2', 'ser-2'), events: [1, 2, 3, 4, 5].map(slow) }),
    ]);
    await eventually(
      () => r.probe.calls.filter((c) => c.aggregateId.startsWith('Cser') && c.end > 0).length === 10,
      {
        what: 'ten slow handlers done',
      },
    );
    const byCase = (id: string) =>
      r.probe.calls.filter((c) => c.aggregateId === id).sort((a, b) => a.seq - b.seq);
    for (const id of ['Cser1', 'Cser2']) {
      const calls = byCase(id);
      expect(calls.map((c) => c.taskId)).toEqual(['Tslow1', 'Tslow2', 'Tslow3', 'Tslow4', 'Tslow5']);
      for (let i = 1; i < calls.length; i++)
        expect(calls[i]?.start).toBeGreaterThanOrEqual(calls[i - 1]?.end as number);
    }
    const a = byCase('Cser1');
    const b = byCase('Cser2');
    const overlap = a.some((x) => b.some((y) => x.start < y.end && y.start < x.end));
    expect(overlap).toBe(true);
  });
});

describe('JetStream transport: crashed handlers and shutdown', () => {
  let t: TestLedger;
  beforeAll(async () => {
    t = await testLedger();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('captures the server MAX_DELIVERIES advisory when a handler never settles', async () => {
    const r = await startReactor(t, { maxDeliver: 2, ackWaitMs: 1_000, drainTimeoutMs: 500 });
    const hang = await t.ledger.store.append({
      ...meta('Chang', 'hang-1'),
      events: [withTask('Thang1')],
    });
    await eventually(
      async () =>
        (await listConsumerDeadLetters(t.ledger.jsm, t.stream)).some(
          (d) => d.source === 'max_deliveries' && d.streamSeq === hang.seqs[0],
        ),
      { what: 'MAX_DELIVERIES advisory captured', timeoutMs: 20_000 },
    );
    r.probe.releaseHang?.();
    await r.app.close();
  });

  it('keeps events queued behind a slow handler of their case alive instead of letting them be redelivered', async () => {
    await t.cleanup();
    t = await testLedger();
    const r = await startReactor(t, { durable: 'patient', ackWaitMs: 1_000, drainTimeoutMs: 5_000 });
    const { seqs } = await t.ledger.store.append({
      ...meta('Cqueue', 'queue-1'),
      events: [1, 2, 3].map((n) => withTask(`Tlong${n}`, n)),
    });
    await eventually(() => r.probe.calls.filter((c) => c.end > 0).length === 3, {
      timeoutMs: 20_000,
      what: 'three long handlers',
    });
    // The third waited ~1.4 s (beyond ack_wait) before it ran, and still ran once, on its first delivery.
    expect(r.probe.calls.map((c) => [c.seq, c.delivery])).toEqual(seqs.map((s) => [s, 1]));
    expect((r.probe.calls[2]?.start ?? 0) - (r.probe.calls[0]?.start ?? 0)).toBeGreaterThan(1_000);
    await r.app.close();
  });

  it('keeps the delivery of a running handler alive past the ack wait when asked', async () => {
    await t.cleanup();
    t = await testLedger();
    const r = await startReactor(t, {
      durable: 'kept',
      ackWaitMs: 1_000,
      keepRunningAliveMs: 10_000,
      drainTimeoutMs: 5_000,
    });
    const { seqs } = await t.ledger.store.append({
      ...meta('Ckept', 'kept-1'),
      events: [withTask('Tlonger1')],
    });
    await eventually(() => r.probe.calls.some((c) => c.end > 0), { timeoutMs: 10_000, what: 'handled' });
    // 2.5 s of handling with a 1 s ack wait: delivered once, never redelivered.
    await new Promise((res) => setTimeout(res, 1_500));
    expect(r.probe.calls.map((c) => [c.seq, c.delivery])).toEqual([[seqs[0], 1]]);
    const info = await t.ledger.jsm.consumers.info(t.stream, 'kept');
    expect(info.num_redelivered).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(seqs[0]);
    await r.app.close();
  });

  it('a consumer lost mid-handling holds the next events one short ack wait, not as long as handling may run', async () => {
    await t.cleanup();
    t = await testLedger();
    // One at a time, as the coordinator routes reports: while one is unsettled, nothing else is handed out.
    const opts = {
      durable: 'one-at-a-time',
      concurrency: 1,
      capacity: 1,
      ackWaitMs: 1_000,
      keepRunningAliveMs: 60_000,
      drainTimeoutMs: 200,
    };
    const a = await startReactor(t, opts);
    const { seqs } = await t.ledger.store.append({
      ...meta('Clost', 'lost-1'),
      events: [withTask('Thangonce1'), withTask('T2', 2), withTask('T3', 3)],
    });
    await eventually(() => a.probe.calls.length === 1, { what: 'the first event running' });
    // Kept alive while it runs (three ack waits here), and the others are held behind it.
    await new Promise((res) => setTimeout(res, 3_000));
    expect(a.probe.calls.map((c) => [c.seq, c.delivery])).toEqual([[seqs[0], 1]]);
    // The process is gone: its handler never settles, nobody extends the delivery any more.
    await a.app.close();
    const lost = Date.now();
    const b = await startReactor(t, opts);
    await eventually(() => b.probe.calls.filter((c) => c.end > 0).length === 3, {
      timeoutMs: 40_000,
      what: 'the next consumer handles all three',
    });
    expect(b.probe.calls.map((c) => [c.seq, c.delivery])).toEqual([
      [seqs[0], 2],
      [seqs[1], 1],
      [seqs[2], 1],
    ]);
    // One ack wait (1 s) plus the new consumer's start, not the minute the handler was allowed.
    expect(b.probe.calls[0]!.start - lost).toBeLessThan(20_000);
    a.probe.releaseHang?.();
    await b.app.close();
  });

  it('drains on close: a running handler finishes and is acked before close resolves', async () => {
    await t.cleanup();
    t = await testLedger();
    const r = await startReactor(t, { durable: 'drainer', drainTimeoutMs: 10_000 });
    const { seqs } = await t.ledger.store.append({
      ...meta('Cdrain', 'drain-1'),
      events: [withTask('Tslow1')],
    });
    await eventually(() => r.probe.calls.some((c) => c.seq === seqs[0]));
    await r.app.close();
    expect(r.probe.calls.find((c) => c.seq === seqs[0])?.end).toBeGreaterThan(0);
    expect(r.server.state).toBe('stopped');
    // The ack reached the server before close resolved; the consumer applies it asynchronously.
    await eventually(
      async () =>
        (await t.ledger.jsm.consumers.info(t.stream, 'drainer')).ack_floor.stream_seq >= (seqs[0] as number),
      {
        timeoutMs: 5_000,
        what: 'ack applied',
      },
    );
  });
});

/**
 * An outage longer than the retry budget (10 deliveries, about 4 min with the default back-off) used
 * to dead-letter every event that needed the dependency, to be re-driven by hand. An event that fails
 * with DependencyUnavailable on its last delivery is held instead and goes on once the dependency is back.
 */
describe('JetStream transport: a dependency outage longer than the retry budget', () => {
  let t: TestLedger;
  beforeAll(async () => {
    t = await testLedger();
  });
  afterAll(async () => {
    await t.cleanup();
  });
  const deadLettered = async (seq: number) =>
    (await listConsumerDeadLetters(t.ledger.jsm, t.stream)).filter((d) => d.streamSeq === seq);

  it('holds the event on its last delivery, past the ack wait, and handles it once the dependency answers', async () => {
    const r = await startReactor(t, { maxDeliver: 2, ackWaitMs: 1_000, outageHoldMs: 60_000 });
    try {
      const ev = await t.ledger.store.append({
        ...meta('Coutage1', 'outage-1'),
        events: [withTask('Toutage1')],
      });
      const seq = ev.seqs[0] as number;
      const calls = () => r.probe.calls.filter((c) => c.seq === seq);
      // both deliveries spent, then tried again while held: more calls than deliveries
      await eventually(() => calls().length >= 5 || undefined, {
        what: 'tries while held',
        timeoutMs: 20_000,
      });
      expect(new Set(calls().map((c) => c.delivery))).toEqual(new Set([1, 2]));
      // longer than two ack waits: without working() the server would give up on the delivery
      // (max_deliver reached) and advise MAX_DELIVERIES, which lands as a dead letter
      await new Promise((res) => setTimeout(res, 2_500));
      expect(await deadLettered(seq)).toEqual([]);
      r.probe.outage = false;
      await eventually(async () => (await ackFloor(t)) >= seq || undefined, {
        what: 'acked after the outage',
      });
      // held past several ack waits without a redelivery: kept alive, never a third delivery
      expect(calls().every((c) => c.delivery <= 2)).toBe(true);
      expect(await deadLettered(seq)).toEqual([]);
    } finally {
      await r.app.close();
    }
  });

  it('dead-letters it once the outage outlasts the hold; any other error on the last delivery as before', async () => {
    const r = await startReactor(t, { maxDeliver: 2, outageHoldMs: 500 });
    try {
      r.probe.outage = true;
      const ev = await t.ledger.store.append({
        ...meta('Coutage2', 'outage-2'),
        events: [withTask('Toutage2')],
      });
      const seq = ev.seqs[0] as number;
      await eventually(async () => (await deadLettered(seq)).length > 0 || undefined, {
        what: 'dead letter after the hold',
        timeoutMs: 20_000,
      });
      expect((await deadLettered(seq))[0]).toMatchObject({ code: 'retries_exhausted' });
      expect((await deadLettered(seq))[0]?.reason).toMatch(/object store|ECONNREFUSED/);

      const boom = await t.ledger.store.append({ ...meta('Cboom2', 'boom-2'), events: [withTask('Tboom2')] });
      const bseq = boom.seqs[0] as number;
      await eventually(async () => (await deadLettered(bseq)).length > 0 || undefined, {
        what: 'an ordinary failure dead-lettered at once',
        timeoutMs: 20_000,
      });
      expect(r.probe.calls.filter((c) => c.seq === bseq)).toHaveLength(2);
    } finally {
      await r.app.close();
    }
  });

  it('a server stopping while it holds an event leaves it unsettled rather than dead-lettered', async () => {
    const r = await startReactor(t, { maxDeliver: 1, outageHoldMs: 60_000, drainTimeoutMs: 5_000 });
    r.probe.outage = true;
    const ev = await t.ledger.store.append({
      ...meta('Coutage3', 'outage-3'),
      events: [withTask('Toutage3')],
    });
    const seq = ev.seqs[0] as number;
    await eventually(() => r.probe.calls.filter((c) => c.seq === seq).length >= 2 || undefined, {
      what: 'held',
      timeoutMs: 20_000,
    });
    const t0 = Date.now();
    await r.app.close();
    expect(Date.now() - t0).toBeLessThan(4_000);
    expect(await deadLettered(seq)).toEqual([]);
  });
});
