/**
 * A 3-node JetStream cluster of nats-server processes on loopback (libs/testing NatsCluster).
 *
 * 1. Append throughput, R1 vs R3, in one run: EventStore.append (validated, expected sequence,
 *    message id — slot ids on R3 when the server has nats-server #4320) with `BENCH_IN_FLIGHT`
 *    appends in flight, `BENCH_ROUNDS` rounds alternating which stream goes first.
 * 2. Reports per minute through the whole loop (local Discord, scripted agent runtime, checks,
 *    Chromium, S3) on the R3 cluster: `BENCH_REPORTS` distinct bugs posted at once, timed until
 *    every case awaits review, with one process of every service and then with two of coordinator,
 *    worker, lease, evidence and monitor.
 *
 * Prints JSON lines {"metric","value","unit",...} on stdout as each figure is known, and progress on
 * stderr. `BENCH_SKIP_LOOP=1` runs part 1 only. The defaults take a few minutes on a shared 2-core
 * machine; a phase that fails says which one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { foldCase } from '@caseloop/case-model';
import { draft } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { dropStackState, ServiceName, startStack } from '@caseloop/stack';
import { NatsCluster, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { BUGS } from '../test/cluster/reports';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CASES = Math.max(2 * IN_FLIGHT, Math.ceil(EVENTS / 20));
const REPORTS = Math.min(Number(process.env.BENCH_REPORTS ?? 4), BUGS.length);

const progress = (line: string) =>
  process.stderr.write(
    `${new Date().toISOString().slice(11, 19)} ${line} (load ${(loadavg()[0] ?? 0).toFixed(1)})\n`,
  );

/** Runs a phase; a failure names it (a bare NatsError TIMEOUT says nothing about where). */
async function phase<T>(name: string, run: () => Promise<T>): Promise<T> {
  progress(`${name}…`);
  try {
    return await run();
  } catch (e) {
    throw Object.assign(new Error(`${name}: ${(e as Error).message}`), { cause: e });
  }
}

const emit = (metric: string, value: number, unit: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(
    `${JSON.stringify({ metric, value: Math.round(value * 100) / 100, unit, load1: loadavg()[0], ...extra })}\n`,
  );

async function appendRate(ledger: Ledger, round: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= EVENTS) return;
      // Each event expecting the last of its case: the ledger's real write pattern. Twice as many
      // cases as appends in flight, so appends of one case rarely overlap (a handler works one
      // event of a case at a time); with fewer, the writers of a case exhaust their retries.
      await ledger.store.handle({
        aggregate: 'case',
        aggregateId: `B${round}x${i % CASES}`,
        producer: 'lease',
        commandId: `b${round}-${i}`,
        causationId: null,
        correlationId: `b${round}`,
        occurredAt: new Date().toISOString(),
        decide: () => [
          draft('LeaseRequested', {
            resource: 'browser:default',
            taskId: `T${i}`,
            revision: 'a'.repeat(40),
            requestId: `R${i}`,
            position: i,
          }),
        ],
      });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return EVENTS / ((performance.now() - started) / 1000);
}

async function appends(cluster: NatsCluster): Promise<void> {
  const ns = uniqueSuffix('bc');
  const open = async (replicas: number) => {
    const stream = `T${ns.toUpperCase()}R${replicas}`;
    const l = await connectLedger({
      servers: cluster.urls,
      namespace: `${ns}r${replicas}`,
      stream,
      name: 'bench',
      replicas,
    });
    await l.provision();
    return l;
  };
  const r1 = await open(1);
  const r3 = await open(3);
  const rates = { r1: [] as number[], r3: [] as number[] };
  let slots: boolean | null = null;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['r1', 'r3'] as const) : (['r3', 'r1'] as const);
      for (const k of order) {
        const rate = await phase(
          `round ${round + 1}/${ROUNDS}: ${EVENTS} appends on ${k.toUpperCase()}`,
          () => appendRate(k === 'r1' ? r1 : r3, round),
        );
        rates[k].push(rate);
        progress(`  ${k.toUpperCase()} ${Math.round(rate)} events/s`);
      }
    }
    slots = (await r3.store.replication(0).catch(() => null))?.unserialisedChecks ?? null;
  } finally {
    for (const l of [r1, r3]) {
      await l.jsm.streams.delete(l.stream).catch(() => undefined);
      await l.jsm.streams.delete(`${l.stream}_DLQ`).catch(() => undefined);
      await l.close();
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  emit('cluster_append_r1_events_per_s', median(rates.r1), 'events/s', { rounds: rates.r1.map(Math.round) });
  emit('cluster_append_r3_events_per_s', median(rates.r3), 'events/s', {
    rounds: rates.r3.map(Math.round),
    slotIds: slots,
  });
  emit('cluster_append_r3_over_r1', median(rates.r3) / median(rates.r1), 'ratio', {
    events: EVENTS,
    cases: CASES,
    inFlight: IN_FLIGHT,
  });
}

async function loop(cluster: NatsCluster, replicas: 1 | 2): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'caseloop-bench-cluster-'));
  const ns = uniqueSuffix('bl');
  const stack = await phase(`loop, ${replicas}x: starting the stack on the cluster`, () =>
    startStack({
      dir,
      natsUrl: cluster.urls.join(','),
      ledgerReplicas: 3,
      databaseUrl: PG_URL,
      namespace: ns,
      stream: `T${ns.toUpperCase()}`,
      dbSchema: ns,
      leaseBucket: `${ns}-leases`,
      readyTimeoutMs: 180_000,
    }),
  );
  const ledger = await connectLedger({
    servers: cluster.urls,
    namespace: ns,
    stream: stack.stream,
    name: 'bench',
  });
  try {
    if (replicas === 2)
      for (const name of ['coordinator', 'worker', 'lease', 'evidence', 'monitor'] as ServiceName[])
        await stack.addReplica(name);
    const d = stack.discord!;
    progress(`loop, ${replicas} process(es) per scaled service: ${REPORTS} reports posted`);
    const started = Date.now();
    const ids = BUGS.slice(0, REPORTS).map(
      (text) => d.say({ authorId: d.userId('alice'), channelId: d.channelId('bugs'), content: text }).id,
    );
    const deadline = started + 20 * 60_000;
    const done = new Set<string>();
    while (done.size < ids.length) {
      if (Date.now() > deadline) throw new Error(`only ${done.size} of ${ids.length} cases reached review`);
      for (const id of ids) {
        if (done.has(id)) continue;
        const routed = (await ledger.store.load('source', `discord-${id}`)).events.findLast(
          (e) => e.type === 'SourceRouted',
        );
        if (!routed || routed.type !== 'SourceRouted') continue;
        const view = foldCase((await ledger.store.load('case', routed.data.caseId)).events);
        if (view?.status === 'awaiting_review') {
          done.add(id);
          progress(
            `  ${done.size}/${ids.length} awaiting review after ${Math.round((Date.now() - started) / 1000)} s`,
          );
        }
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const minutes = (Date.now() - started) / 60_000;
    emit(`cluster_loop_reports_per_min_${replicas}x`, ids.length / minutes, 'reports/min', {
      reports: ids.length,
      seconds: Math.round(minutes * 60),
      replicasPerService: replicas,
    });
  } finally {
    await ledger.close();
    await stack.stop();
    await dropStackState({ ...stack, natsUrl: cluster.urls.join(',') }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const cluster = await NatsCluster.start({ dir: await mkdtemp(join(tmpdir(), 'caseloop-bench-nats-')) });
  try {
    progress(`3 nats-server nodes up: ${cluster.urls.join(',')}`);
    await appends(cluster);
    if (process.env.BENCH_SKIP_LOOP !== '1') {
      await phase('loop with one process of every service', () => loop(cluster, 1));
      await phase('loop with two of coordinator, worker, lease, evidence, monitor', () => loop(cluster, 2));
    }
  } finally {
    await cluster.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench:cluster failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
