import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { draft, EventDraft } from '@caseloop/contracts';
import { connectLedger, EventStore, kvCompareAndSet, Ledger } from '@caseloop/ledger';
import { NatsCluster, uniqueSuffix } from '@caseloop/testing';

jest.setTimeout(300_000);

/**
 * nats-server #4320 on the installed server: on a replicated stream, concurrent appends with the
 * same `Nats-Expected-Last-Subject-Sequence` may all be accepted. Every burst races many cases at
 * once (the defect needs proposals in flight on the leader), six writers per case — two
 * connections to each node — and mixes unguarded cases (event ids, nats.js kv.update) with guarded
 * ones (slot ids) in the same burst: the unguarded ones show the race is real in that very burst,
 * so the guarded ones cannot pass by luck. The totals are printed.
 */
const CASES = Number(process.env.CASELOOP_RACE_CASES ?? 200);
const BURSTS = Number(process.env.CASELOOP_RACE_BURSTS ?? 5);
const WRITERS_PER_NODE = 2;

const requested = (n: number): EventDraft =>
  draft('LeaseRequested', {
    resource: 'browser:default',
    taskId: `T${n}`,
    revision: 'a'.repeat(40),
    requestId: `R${n}`,
    position: n,
  });

const meta = (aggregateId: string, commandId: string) => ({
  aggregate: 'case' as const,
  aggregateId,
  producer: 'lease' as const,
  commandId,
  causationId: null,
  correlationId: aggregateId,
  occurredAt: new Date().toISOString(),
});

let cluster: NatsCluster;
let writers: Ledger[];
let admin: Ledger;
const namespace = uniqueSuffix('race');
const stream = `T${namespace.toUpperCase()}`;

beforeAll(async () => {
  cluster = await NatsCluster.start({ dir: await mkdtemp(join(tmpdir(), 'caseloop-race-')) });
  admin = await connectLedger({ servers: cluster.urls, namespace, stream, name: 'provisioner', replicas: 3 });
  const res = await admin.provision();
  process.stdout.write(
    `provisioned R3 on nats-server ${admin.features.version}: ${res.warnings.join('; ')}\n`,
  );
  writers = [];
  for (const n of cluster.nodes)
    for (let i = 0; i < WRITERS_PER_NODE; i++)
      writers.push(await connectLedger({ servers: n.url, namespace, stream, name: 'lease' }));
});

afterAll(async () => {
  for (const w of writers ?? []) await w.close();
  await admin?.close();
  await cluster?.stop();
});

const storeOf = (w: Ledger, expectationIds: 'event' | 'slot' | 'auto') =>
  new EventStore(w.nc, w.jsm, { namespace, stream, features: w.features, expectationIds });

async function seed(prefix: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: CASES }, async (_, c) => {
      // The defect shows on a subject that already has messages, as a live case's has.
      const r = await admin.store.append({
        ...meta(`${prefix}${c}`, `${prefix}${c}-seed`),
        events: [requested(99)],
        expectedSeq: 0,
      });
      return r.seqs[0] as number;
    }),
  );
}

async function extraEvents(prefix: string): Promise<{ doubled: number; recorded: number }> {
  let doubled = 0;
  let recorded = 0;
  for (let c = 0; c < CASES; c++) {
    const n = (await admin.store.load('case', `${prefix}${c}`)).events.length - 1;
    recorded += n;
    if (n > 1) doubled++;
  }
  return { doubled, recorded };
}

describe(`racing replicas on a 3-node cluster (${BURSTS} bursts × ${CASES} cases × ${3 * WRITERS_PER_NODE} writers)`, () => {
  it('appends with one expectation: plain event ids let several through, slot ids exactly one', async () => {
    const plainStores = writers.map((w) => storeOf(w, 'event'));
    const slotStores = writers.map((w) => storeOf(w, 'slot'));
    let raced = 0;
    for (const s of slotStores) s.observe({ raced: () => raced++ });
    const total = { plain: 0, plainRecorded: 0, slot: 0, slotRecorded: 0 };
    for (let b = 0; b < BURSTS; b++) {
      const [plainSeeds, slotSeeds] = [await seed(`Cp${b}x`), await seed(`Cs${b}x`)];
      // Every writer has loaded the case and decided: all appends go out at once with that expectation.
      const runs: Promise<unknown>[] = [];
      for (let c = 0; c < CASES; c++) {
        for (let w = 0; w < writers.length; w++) {
          for (const [stores, seeds, prefix] of [
            [plainStores, plainSeeds, `Cp${b}x`],
            [slotStores, slotSeeds, `Cs${b}x`],
          ] as const) {
            runs.push(
              (stores[w] as EventStore)
                .append({
                  ...meta(`${prefix}${c}`, `${prefix}${c}-w${w}`),
                  events: [requested(w)],
                  expectedSeq: seeds[c] as number,
                })
                .catch(() => null),
            );
          }
        }
      }
      await Promise.all(runs);
      const plain = await extraEvents(`Cp${b}x`);
      const slot = await extraEvents(`Cs${b}x`);
      total.plain += plain.doubled;
      total.plainRecorded += plain.recorded;
      total.slot += slot.doubled;
      total.slotRecorded += slot.recorded;
    }
    const races = BURSTS * CASES;
    process.stdout.write(
      `race, appends (${races} races of ${writers.length} appends with one expectation, nats-server ${admin.features.version}): ` +
        `plain expectation accepted more than one on ${total.plain} of ${races} (${total.plainRecorded} appends accepted, ${races} correct); ` +
        `slot ids on ${total.slot} of ${races} (${total.slotRecorded} accepted; ${raced} racing appends refused by their slot)\n`,
    );
    if (!admin.features.replicatedConcurrency) expect(total.plain).toBeGreaterThan(0);
    expect(total.slot).toBe(0);
    expect(total.slotRecorded).toBe(BURSTS * CASES);
  });

  it('a service store detects the gap by itself, and its load → decide → append converges on one event', async () => {
    const r = await writers[0]!.store.replication(0);
    expect(r).toMatchObject({ replicas: 3, unserialisedChecks: !admin.features.replicatedConcurrency });
    await seed('Ch');
    await Promise.all(
      Array.from({ length: CASES }, (_, c) =>
        writers.map((w, i) =>
          w.store
            .handle({
              ...meta(`Ch${c}`, `Ch${c}-w${i}`),
              maxAttempts: 20,
              decide: (events) => (events.length > 1 ? [] : [requested(i)]),
            })
            .catch(() => null),
        ),
      ).flat(),
    );
    const h = await extraEvents('Ch');
    expect(h).toEqual({ doubled: 0, recorded: CASES });
  });

  it('KV compare-and-set: nats.js kv.update lets several writers in, the slot-guarded CAS exactly one', async () => {
    const bucket = `${namespace}-leases`;
    await admin.js.views.kv(bucket, { replicas: 3, history: 5 });
    const kvs = await Promise.all(writers.map((w) => w.js.views.kv(bucket)));
    const total = { plain: 0, guarded: 0, none: 0 };
    for (let b = 0; b < BURSTS; b++) {
      // Every key exists (a lease slot granted once); the writers race to update it.
      const first = new Map<string, number>();
      for (let k = 0; k < CASES; k += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, CASES - k) }, async (_, i) => {
            for (const key of [`p${b}x${k + i}`, `g${b}x${k + i}`])
              first.set(key, await kvs[0]!.create(key, new Uint8Array([9])));
          }),
        );
      }
      const count = (r: number[]) => r.reduce((a, x) => a + x, 0);
      const plain: Promise<number>[] = [];
      const guarded: Promise<number>[] = [];
      for (let k = 0; k < CASES; k++) {
        const p = `p${b}x${k}`;
        const g = `g${b}x${k}`;
        plain.push(
          Promise.all(
            kvs.map((kv, w) =>
              kv.update(p, new Uint8Array([w]), first.get(p) as number).then(
                () => 1,
                () => 0,
              ),
            ),
          ).then(count),
        );
        guarded.push(
          Promise.all(
            writers.map((w, i) =>
              kvCompareAndSet(w.js, w.jsm, bucket, g, new Uint8Array([i]), first.get(g) as number).then(
                (rev) => (rev ? 1 : 0),
                () => 0,
              ),
            ),
          ).then(count),
        );
      }
      for (const n of await Promise.all(plain)) if (n > 1) total.plain++;
      for (const n of await Promise.all(guarded)) {
        if (n > 1) total.guarded++;
        if (n === 0) total.none++;
      }
    }
    process.stdout.write(
      `race, KV: kv.update let more than one writer in on ${total.plain} of ${BURSTS * CASES} keys; the guarded CAS on ${total.guarded}\n`,
    );
    if (!admin.features.replicatedConcurrency) expect(total.plain).toBeGreaterThan(0);
    expect(total.guarded).toBe(0);
    expect(total.none).toBe(0);
  });
});
