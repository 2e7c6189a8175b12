import { caseViewProjection, copyIn, rebuildProjection, BoundedStreamReader } from '@caseloop/projections';
import { JsMsg, NatsConnection } from 'nats';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { cpuMeter, CpuSpent } from './cpu';
import { metric, note } from './metrics';

export interface RebuildBenchFixture {
  nc: NatsConnection;
  ds: DataSource;
  schema: string;
  stream: string;
  namespace: string;
  /** The stream holds exactly this many events (seq 1..events). */
  events: number;
}

type RawMethod = 'values' | 'json' | 'copy';

/**
 * The raw limit: a bare read of the stream (bounded pull, next batch prefetched) and a batched
 * write of each batch into one Postgres table — a multi-row insert, or COPY — with no decoding, no
 * folding, no checkpoint. Each batch is one transaction with asynchronous commit, as the runner's.
 */
async function rawReadAndInsert(
  f: RebuildBenchFixture,
  batchSize: number,
  method: RawMethod,
): Promise<{ rate: number; cpu: CpuSpent }> {
  const table = `"${f.schema}".raw_events`;
  await f.ds.query(`drop table if exists ${table}`);
  await f.ds.query(
    `create table ${table} (seq bigint primary key, subject text not null, body jsonb not null)`,
  );
  const nc = f.nc;
  const reader = await BoundedStreamReader.open(nc.jetstream(), await nc.jetstreamManager(), {
    stream: f.stream,
    startSeq: 1,
    batchSize,
  });
  const qr = f.ds.createQueryRunner();
  const client = (await qr.connect()) as PoolClient;
  const meter = cpuMeter();
  const started = performance.now();
  let done = 0;
  let next: Promise<JsMsg[]> | null = reader.next();
  const decoder = new TextDecoder();
  while (next) {
    const msgs = await next;
    next = reader.remaining > 0 ? reader.next() : null;
    if (msgs.length === 0) continue;
    await qr.query('begin; set local synchronous_commit = off');
    if (method === 'values') {
      const params: unknown[] = [];
      const tuples = msgs.map((m) => {
        params.push(m.seq, m.subject, decoder.decode(m.data));
        const n = params.length;
        return `($${n - 2}, $${n - 1}, $${n}::jsonb)`;
      });
      await qr.query(`insert into ${table} (seq, subject, body) values ${tuples.join(', ')}`, params);
    } else if (method === 'copy') {
      // COPY's text format: a JSON body needs only its backslashes doubled (it holds no raw tab or line break).
      const text = msgs
        .map((m) => {
          const body = decoder.decode(m.data);
          return `${m.seq}\t${m.subject}\t${body.includes('\\') ? body.replace(/\\/g, '\\\\') : body}\n`;
        })
        .join('');
      await copyIn(client, `copy ${table} (seq, subject, body) from stdin`, text);
    } else {
      // The bodies are spliced in as they are (they are JSON already): no parse, no re-serialise.
      const json = `[${msgs.map((m) => `{"seq":${m.seq},"subject":${JSON.stringify(m.subject)},"body":${decoder.decode(m.data)}}`).join(',')}]`;
      await qr.query(
        `insert into ${table} (seq, subject, body) select seq, subject, body from json_populate_recordset(null::${table}, $1::json)`,
        [json],
      );
    }
    await qr.query('commit');
    done += msgs.length;
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = meter();
  await qr.release();
  await reader.close();
  await f.ds.query(`drop table ${table}`);
  if (done !== f.events) throw new Error(`raw read saw ${done} of ${f.events} events`);
  return { rate: done / seconds, cpu };
}

interface RebuildRun {
  /** Events per second of the whole command: catch-up, indexes, verification, switch, retirement. */
  rate: number;
  /** Events per second until the new version is built: catch-up and its indexes. */
  built: number;
  catchUp: number;
  seconds: number;
  phases: Record<'catch_up_s' | 'indexing_s' | 'verifying_s' | 'switching_s', number>;
  /** CPU of the catch-up alone, when Node and Postgres share the machine with nothing else of the rebuild. */
  catchUpCpu: CpuSpent;
}

/** One full `caseloop rebuild`, timed phase by phase. */
async function rebuildOnce(f: RebuildBenchFixture, batchSize: number): Promise<RebuildRun> {
  const marks: Partial<Record<'indexing' | 'verifying' | 'switching', number>> = {};
  let catchUpCpu: CpuSpent | null = null;
  const meter = cpuMeter();
  const started = performance.now();
  const report = await rebuildProjection({
    dataSource: f.ds,
    nc: f.nc,
    stream: f.stream,
    namespace: f.namespace,
    projection: caseViewProjection,
    batchSize,
    sampleSize: 20,
    onProgress: (p) => {
      if (
        (p.phase === 'indexing' || p.phase === 'verifying' || p.phase === 'switching') &&
        marks[p.phase] === undefined
      ) {
        marks[p.phase] = performance.now();
        if (p.phase === 'indexing') catchUpCpu = meter();
      }
    },
  });
  const ended = performance.now();
  if (report.checkpoint !== f.events || !report.switched)
    throw new Error(`rebuild ended at ${report.checkpoint}, switched=${report.switched}`);
  const at = (k: keyof typeof marks) => marks[k] ?? ended;
  const s = (ms: number) => Math.round(ms) / 1000;
  return {
    rate: f.events / ((ended - started) / 1000),
    built: f.events / ((at('verifying') - started) / 1000),
    catchUp: f.events / ((at('indexing') - started) / 1000),
    seconds: (ended - started) / 1000,
    phases: {
      catch_up_s: s(at('indexing') - started),
      indexing_s: s(at('verifying') - at('indexing')),
      verifying_s: s(at('switching') - at('verifying')),
      switching_s: s(ended - at('switching')),
    },
    catchUpCpu: catchUpCpu ?? meter(),
  };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

/**
 * `rebuild_events_per_s` (the whole `caseloop rebuild`) beside `rebuild_raw_events_per_s` (the best
 * of three bare ways to batch rows into Postgres). Rounds alternate which side goes first, so neither
 * always inherits the other's WAL and checkpoints; the medians are reported, with the ratio of medians.
 */
export async function benchRebuild(
  f: RebuildBenchFixture,
  { batchSize, rounds = 3 }: { batchSize: number; rounds?: number },
): Promise<void> {
  const raws: number[] = [];
  const rawValues: number[] = [];
  const rawJson: number[] = [];
  const rawCopy: { rate: number; cpu: CpuSpent }[] = [];
  const rebuilds: RebuildRun[] = [];
  for (let round = 0; round < rounds; round++) {
    const rawFirst = round % 2 === 0;
    if (!rawFirst) rebuilds.push(await rebuildOnce(f, batchSize));
    note(
      `round ${round + 1}: raw read + multi-row VALUES, json_populate_recordset, then COPY, of ${f.events} events`,
    );
    const v = await rawReadAndInsert(f, batchSize, 'values');
    const j = await rawReadAndInsert(f, batchSize, 'json');
    const c = await rawReadAndInsert(f, batchSize, 'copy');
    rawValues.push(v.rate);
    rawJson.push(j.rate);
    rawCopy.push(c);
    raws.push(Math.max(v.rate, j.rate, c.rate));
    if (rawFirst) {
      note(`round ${round + 1}: full rebuild of ${f.events} events through the projection runner`);
      rebuilds.push(await rebuildOnce(f, batchSize));
    }
  }
  const rate = median(rebuilds.map((r) => r.rate));
  const raw = median(raws);
  const ratio = (x: number) => Math.round((x / raw) * 100) / 100;
  const built = median(rebuilds.map((r) => r.built));
  const catchUp = median(rebuilds.map((r) => r.catchUp));
  const phase = (k: keyof RebuildRun['phases']) => median(rebuilds.map((r) => r.phases[k]));
  const cpu = (xs: CpuSpent[]) => ({
    node_cpu_s: median(xs.map((x) => x.node_cpu_s)),
    postgres_cpu_s: xs.every((x) => x.postgres_cpu_s !== null)
      ? median(xs.map((x) => x.postgres_cpu_s as number))
      : null,
  });
  metric('rebuild_events_per_s', rate, 'events/s', {
    events: f.events,
    batch: batchSize,
    rounds,
    seconds: Math.round(median(rebuilds.map((r) => r.seconds)) * 10) / 10,
    ratio_to_raw: ratio(rate),
    // Until the new version is built (catch-up and indexes), and the catch-up alone.
    built_events_per_s: Math.round(built),
    built_ratio_to_raw: ratio(built),
    catch_up_events_per_s: Math.round(catchUp),
    catch_up_ratio_to_raw: ratio(catchUp),
    catch_up_s: phase('catch_up_s'),
    indexing_s: phase('indexing_s'),
    verifying_s: phase('verifying_s'),
    switching_s: phase('switching_s'),
    catch_up_cpu: cpu(rebuilds.map((r) => r.catchUpCpu)),
  });
  metric('rebuild_raw_events_per_s', raw, 'events/s', {
    events: f.events,
    batch: batchSize,
    rounds,
    values_events_per_s: Math.round(median(rawValues)),
    json_recordset_events_per_s: Math.round(median(rawJson)),
    copy_events_per_s: Math.round(median(rawCopy.map((c) => c.rate))),
    copy_cpu: cpu(rawCopy.map((c) => c.cpu)),
  });
}
