import { caseLedgerProjection, copyIn, rebuildProjection, BoundedStreamReader } from '@caseloop/projections';
import { JsMsg, NatsConnection } from 'nats';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
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
async function rawReadAndInsert(f: RebuildBenchFixture, batchSize: number, method: RawMethod): Promise<number> {
  const table = `"${f.schema}".raw_events`;
  await f.ds.query(`drop table if exists ${table}`);
  await f.ds.query(`create table ${table} (seq bigint primary key, subject text not null, body jsonb not null)`);
  const nc = f.nc;
  const reader = await BoundedStreamReader.open(nc.jetstream(), await nc.jetstreamManager(), { stream: f.stream, startSeq: 1, batchSize });
  const qr = f.ds.createQueryRunner();
  const client = (await qr.connect()) as PoolClient;
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
      await qr.query(`insert into ${table} (seq, subject, body) select seq, subject, body from json_populate_recordset(null::${table}, $1::json)`, [json]);
    }
    await qr.query('commit');
    done += msgs.length;
  }
  const seconds = (performance.now() - started) / 1000;
  await qr.release();
  await reader.close();
  await f.ds.query(`drop table ${table}`);
  if (done !== f.events) throw new Error(`raw read saw ${done} of ${f.events} events`);
  return done / seconds;
}

/** One full rebuild (catch-up, indexes, verification, switch, retirement); its rates overall and of the catch-up. */
async function rebuildOnce(f: RebuildBenchFixture, batchSize: number): Promise<{ rate: number; catchUp: number; seconds: number }> {
  let caughtUpAt = 0;
  const started = performance.now();
  const report = await rebuildProjection({
    dataSource: f.ds,
    nc: f.nc,
    stream: f.stream,
    namespace: f.namespace,
    projection: caseLedgerProjection,
    batchSize,
    sampleSize: 20,
    onProgress: (p) => {
      if (p.phase === 'indexing' && !caughtUpAt) caughtUpAt = performance.now();
    },
  });
  const seconds = (performance.now() - started) / 1000;
  if (report.checkpoint !== f.events || !report.switched) throw new Error(`rebuild ended at ${report.checkpoint}, switched=${report.switched}`);
  return { rate: f.events / seconds, catchUp: f.events / ((caughtUpAt - started) / 1000), seconds };
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
export async function benchRebuild(f: RebuildBenchFixture, { batchSize, rounds = 3 }: { batchSize: number; rounds?: number }): Promise<void> {
  const raws: number[] = [];
  const rawValues: number[] = [];
  const rawJson: number[] = [];
  const rawCopy: number[] = [];
  const rebuilds: { rate: number; catchUp: number; seconds: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    const rawFirst = round % 2 === 0;
    if (!rawFirst) rebuilds.push(await rebuildOnce(f, batchSize));
    note(`round ${round + 1}: raw read + multi-row VALUES, json_populate_recordset, then COPY, of ${f.events} events`);
    const v = await rawReadAndInsert(f, batchSize, 'values');
    const j = await rawReadAndInsert(f, batchSize, 'json');
    const c = await rawReadAndInsert(f, batchSize, 'copy');
    rawValues.push(v);
    rawJson.push(j);
    rawCopy.push(c);
    raws.push(Math.max(v, j, c));
    if (rawFirst) {
      note(`round ${round + 1}: full rebuild of ${f.events} events through the projection runner`);
      rebuilds.push(await rebuildOnce(f, batchSize));
    }
  }
  const rate = median(rebuilds.map((r) => r.rate));
  const raw = median(raws);
  metric('rebuild_events_per_s', rate, 'events/s', {
    events: f.events,
    batch: batchSize,
    rounds,
    seconds: Math.round(median(rebuilds.map((r) => r.seconds)) * 10) / 10,
    catch_up_events_per_s: Math.round(median(rebuilds.map((r) => r.catchUp))),
    ratio_to_raw: Math.round((rate / raw) * 100) / 100,
  });
  metric('rebuild_raw_events_per_s', raw, 'events/s', {
    events: f.events,
    batch: batchSize,
    rounds,
    values_events_per_s: Math.round(median(rawValues)),
    json_recordset_events_per_s: Math.round(median(rawJson)),
    copy_events_per_s: Math.round(median(rawCopy)),
  });
}
