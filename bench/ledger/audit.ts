import { auditCase } from '@caseloop/projections';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { metric, note, percentile } from './metrics';

export interface AuditBenchFixture {
  nc: NatsConnection;
  ds: DataSource;
  stream: string;
  namespace: string;
  caseId: string;
  /** Events in the stream, for the record. */
  streamEvents: number;
}

/**
 * `audit_case_ms`: the whole `caseloop audit` work for one case — read its events from the stream
 * (a filtered pull consumer), re-fold them with `evolveCase`, read the projection rows in one
 * snapshot, diff — timed end to end in-process (without the CLI's process start), p50 and p99.
 */
export async function benchAudit(f: AuditBenchFixture, { rounds = 200, warmup = 10 } = {}): Promise<void> {
  const deps = { dataSource: f.ds, nc: f.nc, stream: f.stream, namespace: f.namespace };
  const first = await auditCase(deps, f.caseId);
  if (first.drift.length > 0) throw new Error(`the benchmark case drifted: ${JSON.stringify(first.drift)}`);
  note(
    `auditing ${f.caseId} (${first.eventsFolded} events) in a stream of ${f.streamEvents} events, ${rounds} rounds`,
  );
  for (let i = 0; i < warmup; i++) await auditCase(deps, f.caseId);
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    const a = await auditCase(deps, f.caseId);
    times.push(performance.now() - t);
    if (a.drift.length > 0) throw new Error('drift during the benchmark');
  }
  times.sort((a, b) => a - b);
  const extra = { case_events: first.eventsFolded, stream_events: f.streamEvents, rounds, read: first.read };
  metric('audit_case_ms', percentile(times, 50), 'ms', { stat: 'p50', ...extra });
  metric('audit_case_ms', percentile(times, 99), 'ms', { stat: 'p99', ...extra });
}
