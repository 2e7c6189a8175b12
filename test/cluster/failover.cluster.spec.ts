import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { draft } from '@caseloop/contracts';
import { connectLedger, directGet, isNoMessage, Ledger, LedgerError } from '@caseloop/ledger';
import { BoundedStreamReader, StreamReaderStalled } from '@caseloop/projections';
import { eventually, NatsCluster, uniqueSuffix } from '@caseloop/testing';

jest.setTimeout(300_000);

/**
 * The client through failures of a 3-node cluster: appends retried with the same message id
 * through a leader change, the stream's state as the services report it, a KV watch that goes on
 * after its node died, and errors that tell a cluster without a quorum from an outage.
 */
let cluster: NatsCluster;
let ledger: Ledger;
const namespace = uniqueSuffix('fo');
const stream = `T${namespace.toUpperCase()}`;
const requested = (i: number) =>
  draft('LeaseRequested', {
    resource: 'browser:default',
    taskId: `T${i}`,
    revision: 'a'.repeat(40),
    requestId: `R${i}`,
    position: i,
  });
const meta = (caseId: string, commandId: string) => ({
  aggregate: 'case' as const,
  aggregateId: caseId,
  producer: 'lease' as const,
  commandId,
  causationId: null,
  correlationId: caseId,
  occurredAt: new Date().toISOString(),
});

beforeAll(async () => {
  cluster = await NatsCluster.start({ dir: await mkdtemp(join(tmpdir(), 'caseloop-failover-')) });
  ledger = await connectLedger({ servers: cluster.urls, namespace, stream, name: 'lease', replicas: 3 });
  await ledger.provision();
});

afterAll(async () => {
  await ledger?.close();
  await cluster?.stop();
});

it('appends go on through the loss of the stream leader: none lost, none twice, retried with the same id', async () => {
  let retries = 0;
  const off = ledger.store.observe({ retried: () => retries++ });
  const cases = 20;
  const perCase = 15;
  let killed: string | null = null;
  const writers = Array.from({ length: cases }, async (_, c) => {
    for (let i = 0; i < perCase; i++) {
      if (c === 0 && i === 3) {
        killed = await cluster.streamLeader(stream);
        await cluster.kill(killed);
      }
      await ledger.store.handle({
        ...meta(`Cfo${c}`, `fo${c}-${i}`),
        decide: () => [requested(i)],
      });
    }
  });
  await Promise.all(writers);
  off();
  expect(killed).not.toBeNull();
  const leader = await cluster.streamLeader(stream);
  expect(leader).not.toBe(killed);
  for (let c = 0; c < cases; c++) {
    const events = (await ledger.store.load('case', `Cfo${c}`)).events;
    expect(events.map((e) => e.commandId)).toEqual(Array.from({ length: perCase }, (_, i) => `fo${c}-${i}`));
  }
  const info = await ledger.jsm.streams.info(stream);
  expect(info.state.messages).toBe(cases * perCase);
  process.stdout.write(
    `leader ${killed} killed mid-burst: ${cases * perCase} appends, ${retries} retried, 0 lost\n`,
  );

  // One node down: the stream works, degraded; back: healthy again.
  expect(await ledger.store.replication(0)).toMatchObject({ replicas: 3, state: 'degraded' });
  await cluster.restart(killed as unknown as string);
  await eventually(async () => (await ledger.store.replication(0))?.state === 'healthy', {
    timeoutMs: 60_000,
    what: 'the cluster healthy again',
  });
});

it('a KV watch keeps delivering after the node it was served from died', async () => {
  const bucket = `${namespace}-watch`;
  const kv = await ledger.js.views.kv(bucket, { replicas: 3, history: 5 });
  const seen: string[] = [];
  const watch = await kv.watch({ key: '>' });
  void (async () => {
    for await (const e of watch) seen.push(e.key);
  })();
  await kv.put('before', new Uint8Array([1]));
  await eventually(() => seen.includes('before'), { timeoutMs: 10_000, what: 'the first put' });
  const leader = await cluster.streamLeader(`KV_${bucket}`);
  await cluster.kill(leader);
  await eventually(
    async () => {
      await kv.put('after', new Uint8Array([2]));
      return true;
    },
    { timeoutMs: 60_000, what: 'a put after the node loss' },
  );
  await eventually(() => seen.includes('after'), {
    timeoutMs: 60_000,
    what: 'the watch after the node loss',
  });
  watch.stop();
  await cluster.restart(leader);
  await cluster.waitHealthy(60_000);
});

it('a stream reader whose consumer went with its node ends with an error, not a wait', async () => {
  const readStream = `${stream}_READ`;
  const subject = `${namespace}.read.>`;
  await ledger.jsm.streams.add({ name: readStream, subjects: [subject], num_replicas: 3 } as never);
  for (let i = 0; i < 400; i++)
    await ledger.js.publish(`${namespace}.read.${i % 7}`, new Uint8Array([i % 256]));
  const reader = await BoundedStreamReader.open(ledger.js, ledger.jsm, {
    stream: readStream,
    startSeq: 1,
    batchSize: 50,
  });
  const first = await reader.next();
  expect(first).toHaveLength(50);
  // The reader's consumer is ephemeral, in memory, on one node: lose that node.
  const consumers = await ledger.jsm.consumers.list(readStream).next();
  const host = consumers[0]?.cluster?.leader;
  expect(host).toBeTruthy();
  await cluster.kill(host as string);
  const started = Date.now();
  let read = first.length;
  const outcome = await (async () => {
    for (;;) {
      const batch = await reader.next();
      read += batch.length;
      if (reader.remaining === 0) return 'finished';
    }
  })().catch((e: unknown) => e);
  process.stdout.write(
    `reader's node lost: ${outcome instanceof Error ? outcome.name : String(outcome)} after ${Date.now() - started} ms (${read}/400 read)\n`,
  );
  // Either the read finished through another node, or it said it stalled and where: never a silent wait.
  if (outcome !== 'finished') {
    expect(outcome).toBeInstanceOf(StreamReaderStalled);
    expect((outcome as StreamReaderStalled).position).toBe(read + 1);
  }
  await reader.close();
  await cluster.restart(host as string);
  await cluster.waitHealthy(60_000);
});

it('without a quorum an append fails as leader_unavailable, with no server as not_connected', async () => {
  const quick = await connectLedger({
    servers: cluster.urls,
    namespace,
    stream,
    name: 'lease',
    timeoutMs: 4_000,
    attemptTimeoutMs: 1_000,
  });
  try {
    await quick.store.append({ ...meta('Cq', 'q-0'), events: [requested(0)] });
    const [a, b, c] = cluster.nodes.map((n) => n.name) as [string, string, string];
    const connected = quick.nc.info?.server_name;
    // Keep the node this client is on; lose the other two: no stream leader can be elected.
    const others = [a, b, c].filter((n) => n !== connected);
    for (const n of others) await cluster.kill(n);
    const noQuorum = await quick.store.append({ ...meta('Cq', 'q-1'), events: [requested(1)] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(noQuorum).toBeInstanceOf(LedgerError);
    expect((noQuorum as LedgerError).code).toBe('leader_unavailable');
    await cluster.kill(connected as string);
    const outage = await quick.store.append({ ...meta('Cq', 'q-2'), events: [requested(2)] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((outage as LedgerError).code).toBe('not_connected');
    for (const n of [a, b, c]) await cluster.restart(n);
    await cluster.waitHealthy(60_000);
    // Back: the retried command lands once.
    await eventually(
      async () => {
        await quick.store.append({ ...meta('Cq', 'q-1'), events: [requested(1)] });
        return true;
      },
      { timeoutMs: 60_000, what: 'an append after the cluster is back' },
    );
    // Stored once, whether the attempt without a quorum was committed later or not: the raw
    // messages, not a load (which would hide a copy). q-2 may be there too: nats.js flushes what
    // it buffered while no server was reachable once it reconnects; it too must be there once.
    const stored: string[] = [];
    for (let from = 1; ;) {
      const m = await directGet(quick.jsm, stream, {
        seq: from,
        next_by_subj: `${namespace}.case.Cq.lease`,
      }).catch((e: unknown) => {
        if (isNoMessage(e)) return null;
        throw e;
      });
      if (!m) break;
      stored.push((m.json() as { commandId: string }).commandId);
      from = m.seq + 1;
    }
    process.stdout.write(`stored on the subject after the outage: ${stored.join(', ')}\n`);
    expect(stored.length).toBe(new Set(stored).size);
    expect(stored).toEqual(expect.arrayContaining(['q-0', 'q-1']));
    for (const id of stored) expect(['q-0', 'q-1', 'q-2']).toContain(id);
  } finally {
    await quick.close();
  }
});
