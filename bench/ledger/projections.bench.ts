import {
  caseViewProjection,
  createProjectionDataSource,
  migrateProjections,
  ProjectionRunner,
  REBUILD_BATCH,
} from '@caseloop/projections';
import { LedgerEvent } from '@caseloop/contracts';
import { connect } from 'nats';
import { generateHistory } from '../../libs/projections/src/testing/case-history.generator';
import { createTestStream, publishEvents } from '../../libs/projections/src/testing/publish-history';
import { benchAudit } from './audit';
import { metric, note } from './metrics';
import { benchRebuild } from './rebuild';

/**
 * The projection half of `npm run bench:ledger`: one throwaway stream and Postgres schema.
 * 200k events → rebuild vs raw; then grown to 1M with one 30-event case spread across it → audit.
 */
export interface ProjectionBenchOptions {
  natsUrl?: string;
  pgUrl?: string;
  rebuildEvents?: number;
  auditStreamEvents?: number;
  batchSize?: number;
}

const CASE_EVENTS = 30;

/** A single case whose own (case-aggregate) events number exactly 30. */
function thirtyEventCase(): { events: LedgerEvent[]; caseId: string } {
  for (let seed = 1_000; seed < 100_000; seed++) {
    const h = generateHistory({ cases: 1, seed, revisionLoops: 3 });
    if (h.events.filter((e) => e.aggregate === 'case').length === CASE_EVENTS)
      return { events: h.events, caseId: h.caseIds[0] as string };
  }
  throw new Error('no generated case with exactly 30 events');
}

/** Generated cases (about twelve events each), in chunks so a million events never sit in memory at once. */
async function publishFiller(
  nc: Parameters<typeof publishEvents>[0],
  namespace: string,
  count: number,
  seedBase: number,
  splice: { at: number[]; events: LedgerEvent[] },
  offset: number,
): Promise<number> {
  let published = 0;
  let position = offset;
  let seed = seedBase;
  let last = 0;
  while (published < count) {
    const chunk = generateHistory({
      cases: 4_000,
      seed: seed++,
      startTimeMs: Date.UTC(2026, 0, 1) + seed * 10_000_000,
    }).events.slice(0, count - published);
    // The audited case's events go in at their planned positions, so its subjects are spread over the stream.
    const merged: LedgerEvent[] = [];
    for (const e of chunk) {
      while (splice.at.length && (splice.at[0] as number) <= position + merged.length) {
        splice.at.shift();
        merged.push(splice.events.shift() as LedgerEvent);
      }
      merged.push(e);
    }
    last = await publishEvents(nc, namespace, merged, { inFlight: 4_000 });
    published += chunk.length;
    position += merged.length;
    note(`published ${position} events`);
  }
  return last;
}

export async function runProjectionBenchmarks(opts: ProjectionBenchOptions = {}): Promise<void> {
  const natsUrl = opts.natsUrl ?? process.env.CASELOOP_BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
  const pgUrl = opts.pgUrl ?? process.env.CASELOOP_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const rebuildEvents = opts.rebuildEvents ?? 200_000;
  const auditStreamEvents = opts.auditStreamEvents ?? 1_000_000;
  const namespace = `bench${Date.now().toString(36)}`;
  const stream = `T${namespace.toUpperCase()}`;
  const nc = await connect({ servers: natsUrl, noAsyncTraces: true });
  const jsm = await nc.jetstreamManager();
  const ds = createProjectionDataSource({
    url: pgUrl,
    schema: namespace,
    poolSize: 4,
    applicationName: 'caseloop-bench',
  });
  await ds.initialize();
  try {
    await createTestStream(jsm, namespace, stream);
    await migrateProjections(ds);

    const target = thirtyEventCase();
    const stride = Math.floor(auditStreamEvents / (target.events.length + 1));
    const splice = { at: target.events.map((_, i) => (i + 1) * stride - 1), events: [...target.events] };
    const spliced = (n: number) => splice.at.filter((p) => p < n).length;

    const firstPart = rebuildEvents - spliced(rebuildEvents);
    let last = await publishFiller(nc, namespace, firstPart, 1, splice, 0);
    if (last !== rebuildEvents)
      throw new Error(`expected ${rebuildEvents} events in the stream, got ${last}`);
    await benchRebuild(
      { nc, ds, schema: namespace, stream, namespace, events: rebuildEvents },
      { batchSize: opts.batchSize ?? REBUILD_BATCH },
    );

    const remaining = auditStreamEvents - rebuildEvents - splice.events.length;
    last = await publishFiller(nc, namespace, remaining, 10_000, splice, rebuildEvents);
    if (splice.events.length) {
      last = await publishEvents(nc, namespace, splice.events);
    }
    note(`stream holds ${last} events; the live runner catches up`);
    const runner = await ProjectionRunner.start({
      dataSource: ds,
      nc,
      stream,
      projection: caseViewProjection,
      batchSize: 2_000,
    });
    const t = performance.now();
    const from = runner.checkpoint;
    await runner.catchUp();
    metric(
      'projection_catch_up_events_per_s',
      (runner.checkpoint - from) / ((performance.now() - t) / 1000),
      'events/s',
      {
        events: runner.checkpoint - from,
        indexes: 'present',
      },
    );
    await runner.close();
    await benchAudit({ nc, ds, stream, namespace, caseId: target.caseId, streamEvents: last });
  } finally {
    await jsm.streams.delete(stream).catch(() => undefined);
    await ds.query(`drop schema if exists "${namespace}" cascade`).catch(() => undefined);
    await ds.destroy();
    await nc.close();
  }
}

if (require.main === module) {
  runProjectionBenchmarks().catch((e: unknown) => {
    process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
