import { ContractError, draft, HEADERS } from '@caseloop/contracts';
import { eventually } from '@caseloop/testing';
import { headers, nanos } from 'nats';
import { ConcurrencyError, LedgerError } from './errors';
import { EventStore, EXPECTED_LAST_SUBJECT_SEQ_SUBJECT } from './event-store';
import { serverFeatures } from './server-features';
import { finding, leaseRequested, meta, testLedger, TestLedger } from '../test/ledger.fixture';

jest.setTimeout(60_000);

let t: TestLedger;
beforeAll(async () => {
  t = await testLedger();
});
afterAll(async () => {
  await t.cleanup();
});

const store = () => t.ledger.store;
const enc = new TextEncoder();

describe('provisioning', () => {
  it('is idempotent and converges nothing on a second run', async () => {
    const again = await t.ledger.provision();
    expect(again.ledger).toEqual({ name: t.stream, created: false, updated: false });
    expect(again.deadLetters).toEqual({ name: `${t.stream}_DLQ`, created: false, updated: false });
  });

  it('sets explicit limits: no delete, no purge, nothing ages out, 2 min duplicate window, direct get', async () => {
    const cfg = (await t.ledger.jsm.streams.info(t.stream)).config;
    expect(cfg).toMatchObject({
      deny_delete: true,
      deny_purge: true,
      max_age: 0,
      discard: 'new',
      duplicate_window: nanos(120_000),
      allow_direct: true,
      storage: 'file',
    });
    expect(cfg.max_msg_size).toBeGreaterThan(64 * 1024);
    expect(cfg.subjects).toEqual([
      `${t.namespace}.case.*.*`,
      `${t.namespace}.source.*.*`,
      `${t.namespace}.ops.*.*`,
    ]);
  });

  it('converges a drifted setting back', async () => {
    const info = await t.ledger.jsm.streams.info(t.stream);
    await t.ledger.jsm.streams.update(t.stream, { ...info.config, duplicate_window: nanos(30_000) });
    const res = await t.ledger.provision();
    expect(res.ledger.updated).toBe(true);
    expect((await t.ledger.jsm.streams.info(t.stream)).config.duplicate_window).toBe(nanos(120_000));
  });

  it('refuses deleting or purging recorded events', async () => {
    const { seqs } = await store().append({
      ...meta('Cdel', 'cmd-del'),
      events: [leaseRequested(1)],
      expectedSeq: 0,
    });
    await expect(t.ledger.jsm.streams.deleteMessage(t.stream, seqs[0] as number)).rejects.toThrow(/delete/i);
    await expect(t.ledger.jsm.streams.purge(t.stream)).rejects.toThrow(/purge/i);
    await expect(
      t.ledger.jsm.streams.purge(t.stream, { filter: `${t.namespace}.case.Cdel.*` }),
    ).rejects.toThrow(/purge/i);
    expect((await store().load('case', 'Cdel')).events).toHaveLength(1);
  });
});

describe('append and load', () => {
  it('appends with a deterministic msg id and the envelope, and loads it back checked', async () => {
    const res = await store().append({
      ...meta('Cone', 'cmd-1'),
      events: [leaseRequested(1), leaseRequested(2)],
      expectedSeq: 0,
    });
    expect(res.duplicate).toBe(false);
    expect(res.seqs).toHaveLength(2);
    const m = await t.ledger.jsm.streams.getMessage(t.stream, { seq: res.seqs[1] as number });
    expect(m.header.get(HEADERS.msgId)).toBe('cmd-1:1');
    expect(m.header.get(HEADERS.expectedLastSubjectSeq)).toBe(String(res.seqs[0]));
    expect(m.header.keys().sort()).toEqual(
      [HEADERS.msgId, HEADERS.expectedLastSubjectSeq, HEADERS.type, HEADERS.version, HEADERS.producer].sort(),
    );
    expect([
      m.header.get(HEADERS.type),
      m.header.get(HEADERS.version),
      m.header.get(HEADERS.producer),
    ]).toEqual(['LeaseRequested', '1', 'lease']);
    const loaded = await store().load('case', 'Cone');
    expect(loaded.events.map((e) => [e.eventId, e.seq, e.subject])).toEqual([
      ['cmd-1:0', res.seqs[0], `${t.namespace}.case.Cone.lease`],
      ['cmd-1:1', res.seqs[1], `${t.namespace}.case.Cone.lease`],
    ]);
    expect(loaded.lastSeqByProducer).toEqual({ lease: res.seqs[1] });
    expect(loaded.lastSeq).toBe(res.seqs[1]);
  });

  it('loads only the asked aggregate, across producers, in stream order', async () => {
    await store().append({ ...meta('Cmix', 'cmd-m1'), events: [leaseRequested(1)], expectedSeq: 0 });
    await store().append({ ...meta('Cother', 'cmd-o1'), events: [leaseRequested(9)], expectedSeq: 0 });
    const mon = await store().append({
      ...meta('Cmix', 'cmd-m2'),
      producer: 'monitor',
      events: [finding(1)],
      expectedSeq: 0,
    });
    const last = await store().append({ ...meta('Cmix', 'cmd-m3'), events: [leaseRequested(2)] });
    const loaded = await store().load('case', 'Cmix');
    expect(loaded.events.map((e) => e.commandId)).toEqual(['cmd-m1', 'cmd-m2', 'cmd-m3']);
    expect(loaded.lastSeqByProducer).toEqual({ lease: last.seqs[0], monitor: mon.seqs[0] });
    expect((await store().load('case', 'Cnothing')).events).toEqual([]);
  });

  it('counts a second copy of a recorded event once, while expecting the copy’s sequence next', async () => {
    const { seqs } = await store().append({
      ...meta('Ccopy', 'cmd-copy'),
      events: [leaseRequested(1)],
      expectedSeq: 0,
    });
    const original = await t.ledger.jsm.streams.getMessage(t.stream, { seq: seqs[0] as number });
    // The same bytes again, as a re-send after the duplicate window would store them.
    const copy = await t.ledger.js.publish(original.subject, original.data);
    const loaded = await store().load('case', 'Ccopy');
    expect(loaded.events.map((e) => e.seq)).toEqual(seqs);
    expect(loaded.lastSeqByProducer.lease).toBe(copy.seq);
    await store().append({
      ...meta('Ccopy', 'cmd-copy-2'),
      events: [leaseRequested(2)],
      expectedSeq: copy.seq,
    });
  });

  it('maps a wrong expected sequence (10071) to ConcurrencyError', async () => {
    const first = await store().append({
      ...meta('Cocc', 'cmd-a'),
      events: [leaseRequested(1)],
      expectedSeq: 0,
    });
    const err = await store()
      .append({ ...meta('Cocc', 'cmd-b'), events: [leaseRequested(2)], expectedSeq: 0 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConcurrencyError);
    expect((err as ConcurrencyError).code).toBe('concurrency_conflict');
    const ok = await store().append({
      ...meta('Cocc', 'cmd-b'),
      events: [leaseRequested(2)],
      expectedSeq: first.seqs[0] as number,
    });
    expect(ok.seqs[0]).toBeGreaterThan(first.seqs[0] as number);
  });

  it('refuses with stream_missing when no stream takes the subject', async () => {
    const elsewhere = new EventStore(t.ledger.nc, t.ledger.jsm, {
      namespace: `${t.namespace}x`,
      stream: `${t.stream}X`,
      features: t.ledger.features,
    });
    await expect(
      elsewhere.append({ ...meta('Cnone', 'cmd-none'), events: [leaseRequested(1)] }),
    ).rejects.toMatchObject({
      code: 'stream_missing',
    });
  });

  it('surfaces any other JetStream refusal in the ack as append_refused with its code', async () => {
    const namespace = `${t.namespace}small`;
    const stream = `${t.stream}SMALL`;
    await t.ledger.jsm.streams.add({ name: stream, subjects: [`${namespace}.case.*.*`], max_msg_size: 64 });
    try {
      const small = new EventStore(t.ledger.nc, t.ledger.jsm, {
        namespace,
        stream,
        features: t.ledger.features,
      });
      const err = await small
        .append({ ...meta('Cbig', 'cmd-big'), events: [leaseRequested(1)], expectedSeq: 0 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LedgerError);
      expect(err).toMatchObject({ code: 'append_refused', details: { jsCode: expect.any(Number) } });
    } finally {
      await t.ledger.jsm.streams.delete(stream);
    }
  });

  it('lets exactly one of 50 concurrent writers with the same expectation win', async () => {
    const base = await store().append({
      ...meta('Crace', 'cmd-base'),
      events: [leaseRequested(0)],
      expectedSeq: 0,
    });
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        store().append({
          ...meta('Crace', `cmd-w${i}`),
          events: [leaseRequested(i + 1)],
          expectedSeq: base.seqs[0] as number,
        }),
      ),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.every((r) => (r as PromiseRejectedResult).reason instanceof ConcurrencyError)).toBe(true);
    expect((await store().load('case', 'Crace')).events).toHaveLength(2);
  });

  it('returns the original sequence for a duplicate', async () => {
    const input = { ...meta('Cdup', 'cmd-dup'), events: [leaseRequested(1)], expectedSeq: 0 };
    const first = await store().append(input);
    const again = await store().append(input);
    expect(again).toEqual({ seqs: first.seqs, duplicate: true });
    expect((await store().load('case', 'Cdup')).events).toHaveLength(1);
  });

  it('completes a partially appended command on retry', async () => {
    const events = [leaseRequested(1), leaseRequested(2), leaseRequested(3)];
    // The first event made it before the writer crashed.
    const partial = await store().append({
      ...meta('Cpart', 'cmd-p'),
      events: events.slice(0, 1),
      expectedSeq: 0,
    });
    const retry = await store().append({ ...meta('Cpart', 'cmd-p'), events, expectedSeq: 0 });
    expect(retry.duplicate).toBe(false);
    expect(retry.seqs[0]).toBe(partial.seqs[0]);
    const loaded = await store().load('case', 'Cpart');
    expect(loaded.events.map((e) => e.eventId)).toEqual(['cmd-p:0', 'cmd-p:1', 'cmd-p:2']);
    expect(loaded.events.map((e) => e.seq)).toEqual(retry.seqs);
  });

  it('validates everything before the first publish', async () => {
    const bad = draft('LeaseRequested', {
      resource: 'nope',
      taskId: 'T1',
      revision: 'x',
      requestId: 'R',
      position: -1,
    } as never);
    await expect(
      store().append({ ...meta('Cval', 'cmd-v'), events: [leaseRequested(1), bad], expectedSeq: 0 }),
    ).rejects.toBeInstanceOf(ContractError);
    await expect(
      store().append({ ...meta('C.bad', 'cmd-u'), events: [leaseRequested(1)] }),
    ).rejects.toMatchObject({
      code: 'unsafe_id',
    });
    expect((await store().load('case', 'Cval')).events).toEqual([]);
  });

  it('surfaces a message that breaks its contract as a ContractError naming its sequence (undecodable: throw)', async () => {
    await store().append({ ...meta('Cbad', 'cmd-ok'), events: [leaseRequested(1)], expectedSeq: 0 });
    const ack = await t.ledger.js.publish(`${t.namespace}.case.Cbad.lease`, enc.encode('{not json'));
    const err = await store()
      .load('case', 'Cbad', { undecodable: 'throw' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContractError);
    expect((err as ContractError).code).toBe('malformed_json');
    expect((err as ContractError).details).toEqual({ seq: ack.seq });
  });

  it("by default passes over a newer producer's event (and a forged one), lists them, and lets the case move on", async () => {
    const ok = await store().append({
      ...meta('Cfut', 'cmd-f1'),
      events: [leaseRequested(1)],
      expectedSeq: 0,
    });
    const [valid] = store().build({ ...meta('Cfut', 'cmd-f2'), events: [leaseRequested(2)] });
    const subject = `${t.namespace}.case.Cfut.lease`;
    const unknownType = await t.ledger.js.publish(
      subject,
      enc.encode(JSON.stringify({ ...valid, type: 'LeaseSharded' })),
    );
    const newerVersion = await t.ledger.js.publish(
      subject,
      enc.encode(JSON.stringify({ ...valid, version: 9 })),
    );
    const loaded = await store().load('case', 'Cfut');
    expect(loaded.events.map((e) => e.seq)).toEqual(ok.seqs);
    expect(loaded.passedOver).toEqual([
      expect.objectContaining({ seq: unknownType.seq, subject, code: 'unknown_event_type' }),
      expect.objectContaining({ seq: newerVersion.seq, subject, code: 'unknown_event_version' }),
    ]);
    // the passed-over messages still count for the subject's expected sequence
    expect(loaded.lastSeqByProducer.lease).toBe(newerVersion.seq);
    const next = await store().handle({
      ...meta('Cfut', 'cmd-f3'),
      consistency: 'producer',
      decide: () => [leaseRequested(3)],
    });
    expect(next.appended).toHaveLength(1);

    // a type and version this reader knows, with data its schema refuses, is not guessed away
    await t.ledger.js.publish(
      subject,
      enc.encode(
        JSON.stringify({ ...valid, eventId: 'cmd-f4:0', commandId: 'cmd-f4', data: { resource: 1 } }),
      ),
    );
    await expect(store().load('case', 'Cfut')).rejects.toMatchObject({ code: 'invalid_payload' });
    expect((await store().load('case', 'Cfut', { undecodable: 'skip' })).passedOver).toHaveLength(3);
  });

  it('passes over such a message when the reader asks to (undecodable: skip), and reads one producer alone', async () => {
    const ok = await store().append({
      ...meta('Cskip', 'cmd-s1'),
      events: [leaseRequested(1)],
      expectedSeq: 0,
    });
    const bad = await t.ledger.js.publish(`${t.namespace}.case.Cskip.lease`, enc.encode('{not json'));
    const mon = await store().append({
      ...meta('Cskip', 'cmd-s2'),
      producer: 'monitor',
      events: [finding(1)],
    });
    const all = await store().load('case', 'Cskip', { undecodable: 'skip' });
    expect(all.events.map((e) => e.seq)).toEqual([ok.seqs[0], mon.seqs[0]]);
    expect(all.lastSeq).toBe(mon.seqs[0]);
    expect(bad.seq).toBeLessThan(mon.seqs[0] as number);
    const own = await store().load('case', 'Cskip', { producer: 'monitor' });
    expect(own.events.map((e) => e.commandId)).toEqual(['cmd-s2']);
  });
});

describe('handle: load, decide, append', () => {
  it('re-decides on a conflict and appends against the fresh state', async () => {
    await store().handle({
      ...meta('Chandle', 'cmd-h'),
      consistency: 'producer',
      decide: () => [leaseRequested(0)],
    });
    const seen: number[] = [];
    const racing = await store().handle({
      ...meta('Chandle', 'cmd-h2'),
      consistency: 'producer',
      decide: (events) => {
        seen.push(events.length);
        // A rival lands between our load and our append (same connection: it goes out first).
        if (seen.length === 1)
          void store().append({ ...meta('Chandle', 'cmd-rival'), events: [leaseRequested(1)] });
        return [leaseRequested(events.length)];
      },
    });
    expect(racing.attempts).toBe(2);
    expect(seen).toEqual([1, 2]);
    const loaded = await store().load('case', 'Chandle');
    expect(loaded.events.map((e) => e.commandId)).toEqual(['cmd-h', 'cmd-rival', 'cmd-h2']);
    expect(racing.appended.map((e) => [e.seq, e.eventId])).toEqual([[loaded.events[2]?.seq, 'cmd-h2:0']]);
    expect(loaded.events[2]?.type === 'LeaseRequested' && loaded.events[2].data.position).toBe(2);
  });

  it('retries a real conflict: 10 handlers racing on one subject all land, each on fresh state', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store().handle({
          ...meta('Cmany', `many-${i}`),
          consistency: 'producer',
          maxAttempts: 50,
          decide: (events) => [leaseRequested(events.length)],
        }),
      ),
    );
    expect(results.some((r) => r.attempts > 1)).toBe(true);
    const loaded = await store().load('case', 'Cmany');
    expect(loaded.events.map((e) => (e.type === 'LeaseRequested' ? e.data.position : -1))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
  });

  it('gives up after maxAttempts with retries_exhausted', async () => {
    let n = 0;
    const err = await store()
      .handle({
        ...meta('Cexhaust', 'cmd-x'),
        consistency: 'producer',
        maxAttempts: 3,
        decide: () => {
          n++;
          void store().append({ ...meta('Cexhaust', `cmd-rival-${n}`), events: [leaseRequested(n)] });
          return [leaseRequested(n)];
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe('retries_exhausted');
    expect(n).toBe(3);
    await eventually(async () => (await store().load('case', 'Cexhaust')).events.length === 3);
    const loaded = await store().load('case', 'Cexhaust');
    expect(loaded.events.every((e) => e.commandId.startsWith('cmd-rival-'))).toBe(true);
  });

  it('refuses a command id already used on another aggregate instead of reporting its sequence', async () => {
    await store().append({ ...meta('Creuse1', 'cmd-reused'), events: [leaseRequested(1)], expectedSeq: 0 });
    await expect(
      store().append({ ...meta('Creuse2', 'cmd-reused'), events: [leaseRequested(1)], expectedSeq: 0 }),
    ).rejects.toMatchObject({ code: 'command_id_reused' });
  });

  it('does not decide a command twice', async () => {
    const first = await store().handle({ ...meta('Conce', 'cmd-once'), decide: () => [leaseRequested(1)] });
    let decided = false;
    const again = await store().handle({
      ...meta('Conce', 'cmd-once'),
      decide: () => {
        decided = true;
        return [leaseRequested(2)];
      },
    });
    expect(decided).toBe(false);
    expect(again.alreadyHandled).toBe(true);
    expect(again.appended.map((e) => e.seq)).toEqual(first.appended.map((e) => e.seq));
  });
});

describe('server version gates (this machine runs nats-server 2.9)', () => {
  it('knows the server', () => {
    expect(t.ledger.features.version).toMatch(/^2\.9\./);
    expect(t.ledger.features.aggregateConcurrency).toBe(false);
  });

  it('2.9 silently ignores the whole-aggregate header, so the store refuses to rely on it', async () => {
    await store().append({ ...meta('Cgate', 'cmd-g1'), events: [leaseRequested(1)], expectedSeq: 0 });
    // A raw publish with a wrong whole-case expectation is accepted by 2.9: the check did not happen.
    const h = headers();
    h.set(EXPECTED_LAST_SUBJECT_SEQ_SUBJECT, `${t.namespace}.case.Cgate.*`);
    h.set(HEADERS.expectedLastSubjectSeq, '0');
    const ignored = await t.ledger.js
      .publish(`${t.namespace}.case.Cgate.monitor`, enc.encode('{}'), { headers: h })
      .then(
        () => 'accepted',
        () => 'refused',
      );
    expect(ignored).toBe('accepted');

    const err = await store()
      .append({ ...meta('Cgate', 'cmd-g2'), events: [leaseRequested(2)], expectedAggregateSeq: 0 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe('feature_unsupported');
    await expect(
      store().handle({
        ...meta('Cgate', 'cmd-g3'),
        consistency: 'aggregate',
        decide: () => [leaseRequested(3)],
      }),
    ).rejects.toMatchObject({ code: 'feature_unsupported' });
    // `strongest` falls back to the per-producer check that 2.9 does enforce.
    const m = await t.ledger.jsm.streams.getMessage(t.stream, {
      last_by_subj: `${t.namespace}.case.Cgate.lease`,
    });
    expect(m.header.get(EXPECTED_LAST_SUBJECT_SEQ_SUBJECT)).toBe('');
  });

  it('sends no 2.11-only header on 2.9 when handling with the strongest consistency', async () => {
    const res = await store().handle({ ...meta('Cstrong', 'cmd-s'), decide: () => [leaseRequested(1)] });
    const m = await t.ledger.jsm.streams.getMessage(t.stream, { seq: res.appended[0]?.seq as number });
    expect(m.header.get(EXPECTED_LAST_SUBJECT_SEQ_SUBJECT)).toBe('');
    expect(m.header.get(HEADERS.expectedLastSubjectSeq)).toBe('0');
  });

  it('on 2.11+ handles with whole-case concurrency: the header pair names the case and its last sequence', async () => {
    // The same store as a 2.11 server would get it. This 2.9 server ignores the -Subject header, so
    // the case here has only this producer's events: both readings of the check then agree.
    const on211 = new EventStore(t.ledger.nc, t.ledger.jsm, {
      namespace: t.namespace,
      stream: t.stream,
      features: serverFeatures('2.11.1'),
    });
    const first = await on211.handle({ ...meta('C211', 'cmd-211a'), decide: () => [leaseRequested(1)] });
    const second = await on211.handle({
      ...meta('C211', 'cmd-211b'),
      decide: () => [leaseRequested(2), leaseRequested(3)],
    });
    const headersOf = async (seq: number) => {
      const m = await t.ledger.jsm.streams.getMessage(t.stream, { seq });
      return [m.header.get(EXPECTED_LAST_SUBJECT_SEQ_SUBJECT), m.header.get(HEADERS.expectedLastSubjectSeq)];
    };
    const filter = `${t.namespace}.case.C211.*`;
    expect(await headersOf(first.appended[0]?.seq as number)).toEqual([filter, '0']);
    expect(await headersOf(second.appended[0]?.seq as number)).toEqual([
      filter,
      String(first.appended[0]?.seq),
    ]);
    // The second event of a command expects the first one's sequence, across the whole case too.
    expect(await headersOf(second.appended[1]?.seq as number)).toEqual([
      filter,
      String(second.appended[0]?.seq),
    ]);
    await expect(
      on211.append({ ...meta('C211', 'cmd-211c'), events: [leaseRequested(4)], expectedAggregateSeq: 1 }),
    ).rejects.toBeInstanceOf(ConcurrencyError);
  });
});
