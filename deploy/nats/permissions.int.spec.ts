import { draft, EventDraft, Producer } from '@caseloop/contracts';
import {
  connectLedger,
  JetStreamServer,
  Ledger,
  LedgerError,
  listConsumerDeadLetters,
  redriveConsumerDeadLetter,
  SourceKeys,
  sourceKeyStream,
} from '@caseloop/ledger';
import { run } from '@caseloop/cli';
import { eventually } from '@caseloop/testing';
import { AckPolicy, connect } from 'nats';
import { NatsUser, RestrictedNats, startRestrictedNats } from './restricted-nats.fixture';

jest.setTimeout(120_000);

const NAMESPACE = 'caseloop';
const STREAM = 'CASE_LEDGER';
const at = '2026-11-29T20:00:00.000Z';

const events: Record<'intake' | 'worker' | 'monitor', EventDraft> = {
  intake: draft('LinkReviewSettled', {
    reviewerId: '1001',
    messageId: '2002',
    reviewId: 'R1',
    verdict: 'same',
  }),
  worker: draft('AttemptStarted', {
    taskId: 'T1',
    attemptId: 'A1',
    attempt: 1,
    route: { name: 'default', kind: 'normal' },
    fromCleanTree: true,
  }),
  monitor: draft('FindingRecorded', {
    findingId: 'F1',
    kind: 'no_progress',
    owner: 'worker',
    detail: 'stalled',
    observedSeq: 0,
  }),
};

describe('deploy/nats/nats.conf on a nats-server of its own', () => {
  let nats: RestrictedNats;
  const open: Ledger[] = [];
  const as = async (user: NatsUser) => {
    const l = await connectLedger({
      servers: nats.url,
      namespace: NAMESPACE,
      stream: STREAM,
      name: user,
      user,
      pass: nats.password(user),
      timeoutMs: 3_000,
    });
    open.push(l);
    return l;
  };
  const append = (
    l: Ledger,
    producer: Producer,
    ev: EventDraft,
    aggregateId = 'C1',
    commandId = `${producer}-${Math.random().toString(36).slice(2)}`,
  ) =>
    l.store.append({
      aggregate: 'case',
      aggregateId,
      producer,
      events: [ev],
      commandId,
      causationId: null,
      correlationId: 'corr',
      occurredAt: at,
    });

  beforeAll(async () => {
    nats = await startRestrictedNats();
    const provisioner = await as('provisioner');
    await provisioner.provision();
  });
  afterAll(async () => {
    for (const l of open) await l.close();
    await nats?.stop();
  });

  it('refuses a wrong password', async () => {
    await expect(
      connect({ servers: nats.url, user: 'worker', pass: 'wrong', reconnect: false }),
    ).rejects.toThrow(/Authorization/i);
  });

  it('lets each service append its own events and load a case', async () => {
    const worker = await as('worker');
    const res = await append(worker, 'worker', events.worker);
    expect(res.seqs).toHaveLength(1);
    const monitor = await as('monitor');
    await append(monitor, 'monitor', events.monitor);
    expect((await monitor.store.load('case', 'C1')).events.map((e) => e.producer)).toEqual([
      'worker',
      'monitor',
    ]);
  });

  it('refuses another service subject: the monitor cannot append intake or worker events', async () => {
    const monitor = await as('monitor');
    for (const [producer, ev] of [
      ['intake', events.intake],
      ['worker', events.worker],
    ] as const) {
      const err = await append(monitor, producer, ev, 'C2').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LedgerError);
      expect((err as LedgerError).code).toBe('permission_denied');
    }
    const raw = await monitor.js
      .publish(`${NAMESPACE}.case.C2.intake`, new Uint8Array(2))
      .catch((e: unknown) => e);
    expect(raw).toBeInstanceOf(Error);
    const audit = await as('audit');
    expect((await audit.store.load('case', 'C2')).events).toEqual([]);
    // The refused publishes did not cost the monitor its connection.
    await append(monitor, 'monitor', events.monitor, 'C2');
  });

  it('lets the console read the dead letters, and neither append, consume nor re-drive', async () => {
    const worker = await as('worker');
    await worker.deadLetters.record({
      stream: STREAM,
      streamSeq: 1,
      subject: `${NAMESPACE}.case.C1.worker`,
      consumer: 'worker',
      producer: 'worker',
      reason: 'console permission test',
      code: 'poison',
      deliveryCount: 1,
      eventType: null,
      recordedAt: at,
    });
    const reader = await as('console');
    const letters = await listConsumerDeadLetters(reader.jsm, STREAM);
    expect(letters.some((d) => d.reason === 'console permission test')).toBe(true);
    for (const [producer, ev] of [
      ['monitor', events.monitor],
      ['worker', events.worker],
    ] as const) {
      const err = await append(reader, producer, ev, 'C5').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LedgerError);
      expect((err as LedgerError).code).toBe('permission_denied');
    }
    await expect(
      reader.jsm.consumers.add(STREAM, { name: 'console-peek', ack_policy: AckPolicy.None }),
    ).rejects.toThrow();
    await expect(
      redriveConsumerDeadLetter(reader.nc, {
        namespace: NAMESPACE,
        consumer: 'worker',
        seq: 1,
        timeoutMs: 1_000,
      }),
    ).rejects.toThrow();
  });

  it('keeps the provisioner and the audit user from writing events, and audit from deleting', async () => {
    const provisioner = await as('provisioner');
    await expect(append(provisioner, 'worker', events.worker, 'C3')).rejects.toMatchObject({
      code: 'permission_denied',
    });
    const audit = await as('audit');
    await expect(append(audit, 'monitor', events.monitor, 'C3')).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await expect(audit.jsm.streams.purge(STREAM)).rejects.toThrow();
    await expect(audit.jsm.streams.delete(STREAM)).rejects.toThrow();
    expect((await audit.jsm.streams.info(STREAM)).config.name).toBe(STREAM);
  });

  it('gives the source keys to intake alone: it seals, reads and erases them; nobody else reads a key', async () => {
    const intake = await as('intake');
    const keys = await SourceKeys.open(intake.js, intake.jsm, NAMESPACE);
    const sealed = await keys.seal('discord-42', 'raw AKIAIOSFODNN7EXAMPLE');
    if (sealed === 'forgotten') throw new Error('a new source has no delete marker');
    expect(await keys.open('discord-42', sealed)).toBe('raw AKIAIOSFODNN7EXAMPLE');
    for (const user of ['coordinator', 'worker', 'evidence', 'monitor', 'audit', 'lease'] as const) {
      const other = await as(user);
      await expect(SourceKeys.open(other.js, other.jsm, NAMESPACE)).rejects.toThrow(/source key bucket/);
      await expect(
        other.jsm.streams.getMessage(sourceKeyStream(NAMESPACE), {
          last_by_subj: '$KV.caseloop-source-keys.src.discord-42',
        }),
      ).rejects.toThrow();
      await expect(
        other.js.publish('$KV.caseloop-source-keys.src.discord-43', new Uint8Array(32)),
      ).rejects.toThrow();
    }
    expect(await keys.forget('discord-42')).toBe('erased');
    expect(await keys.open('discord-42', sealed)).toBeNull();
    expect(await keys.state('discord-42')).toBe('forgotten');
    // The marker keeps the source's key from being made again.
    expect(await keys.seal('discord-42', 'again')).toBe('forgotten');
  });

  it('lets the audit user replay a case with the caseloop CLI, read-only', async () => {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), isTTY: false };
    const env = {
      CASELOOP_NATS_URL: nats.url,
      CASELOOP_NATS_USER: 'audit',
      CASELOOP_NATS_PASSWORD: nats.password('audit'),
    };
    const code = await run(['replay', 'C1', '--json'], io, env);
    expect({ code, output: lines.join('\n') }).toMatchObject({ code: 0 });
    expect(lines.join('\n')).toContain('AttemptStarted');
    expect(lines.join('\n')).not.toMatch(/Permissions Violation/i);
  });

  it('lets the lease service answer lease requests from evidence and the worker, and no one else', async () => {
    const lease = await as('lease');
    const sub = lease.nc.subscribe(`${NAMESPACE}.lease-rpc.>`, {
      callback: (_e, m) => m.respond(new TextEncoder().encode('ok')),
    });
    await lease.nc.flush();
    for (const user of ['evidence', 'worker'] as const) {
      const client = await as(user);
      const reply = await client.nc.request(`${NAMESPACE}.lease-rpc.check`, new Uint8Array(), {
        timeout: 3_000,
      });
      expect(new TextDecoder().decode(reply.data)).toBe('ok');
    }
    const monitor = await as('monitor');
    await expect(
      monitor.nc.request(`${NAMESPACE}.lease-rpc.acquire`, new Uint8Array(), { timeout: 1_000 }),
    ).rejects.toThrow();
    sub.unsubscribe();
  });

  it('lets a service replay through an ephemeral consumer but not touch another service’s durable', async () => {
    const provisioner = await as('provisioner');
    await provisioner.jsm.consumers.add(STREAM, {
      durable_name: 'coordinator',
      ack_policy: AckPolicy.Explicit,
      filter_subject: `${NAMESPACE}.*.*.*`,
    });
    const worker = await as('worker');
    const ordered = await worker.js.consumers.get(STREAM, { filterSubjects: `${NAMESPACE}.case.C1.*` });
    const first = await ordered.next({ expires: 5_000 });
    expect(first?.subject).toBe(`${NAMESPACE}.case.C1.worker`);
    await expect(worker.jsm.consumers.delete(STREAM, 'coordinator')).rejects.toThrow();
    const stolen = await worker.js.consumers
      .get(STREAM, 'coordinator')
      .then(
        (c) => c.next({ expires: 1_000 }),
        () => null,
      )
      .catch(() => null);
    expect(stolen).toBeNull();
    expect((await provisioner.jsm.consumers.info(STREAM, 'coordinator')).num_ack_pending).toBe(0);
  });

  it('lets a service run its own durable consumer, dead-letter and answer re-drives, but not take over another', async () => {
    const worker = await as('worker');
    const server = new JetStreamServer({ ledger: worker, producer: 'worker', setupRetryMs: 200 });
    server.listen(() => undefined);
    await eventually(() => server.state === 'consuming', { what: 'worker consumer with worker permissions' });
    await worker.deadLetters.record({
      stream: STREAM,
      streamSeq: 1,
      subject: `${NAMESPACE}.case.C1.worker`,
      consumer: 'worker',
      producer: 'worker',
      reason: 'permission test',
      code: 'poison',
      deliveryCount: 1,
      eventType: null,
      recordedAt: at,
    });
    // Operators (the provisioning user) may ask it to re-drive; another service may not.
    const { seqs } = await append(worker, 'worker', events.worker, 'C4');
    const seq = seqs[0] as number;
    const provisioner = await as('provisioner');
    // Nothing in this bare server handles AttemptStarted: the re-drive settles as skipped.
    expect(
      await redriveConsumerDeadLetter(provisioner.nc, {
        namespace: NAMESPACE,
        consumer: 'worker',
        seq,
        timeoutMs: 5_000,
      }),
    ).toEqual({
      seq,
      outcome: 'skipped',
    });
    const monitor = await as('monitor');
    await expect(
      redriveConsumerDeadLetter(monitor.nc, {
        namespace: NAMESPACE,
        consumer: 'worker',
        seq,
        timeoutMs: 1_000,
      }),
    ).rejects.toThrow();
    await server.close();

    const intruder = new JetStreamServer({
      ledger: worker,
      producer: 'worker',
      durable: 'coordinator',
      setupRetryMs: 200,
    });
    intruder.listen(() => undefined);
    await eventually(() => intruder.state === 'waiting_for_stream', { what: 'refused consumer' });
    await intruder.close();
  });
});
