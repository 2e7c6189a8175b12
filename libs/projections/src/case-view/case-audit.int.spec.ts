import { foldCase } from '@caseloop/case-model';
import { EventDraft } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { DataSource } from 'typeorm';
import { createProjectionDataSource, migrateProjections } from '../data-source';
import { ProjectionCatalog } from '../projection-catalog';
import { ProjectionRunner } from '../projection-runner';
import { generateHistory } from '../testing/case-history.generator';
import { auditCase } from './case-audit';
import { caseViewProjection, caseRow } from './case-view.projection';
import { readCaseHistory } from './case-stream';

jest.setTimeout(120_000);

describe('auditing a case appended through the ledger', () => {
  const namespace = uniqueSuffix('a');
  const stream = `T${namespace.toUpperCase()}`;
  let ledger: Ledger;
  let ds: DataSource;
  let catalog: ProjectionCatalog;
  let caseId: string;
  const lastOnSubject = new Map<string, number>();

  const append = async (e: {
    aggregate: 'case' | 'source' | 'ops';
    aggregateId: string;
    producer: string;
    type: string;
    data: unknown;
    commandId: string;
    occurredAt: string;
  }) => {
    const subject = `${e.aggregate}.${e.aggregateId}.${e.producer}`;
    const { seqs } = await ledger.store.append({
      aggregate: e.aggregate,
      aggregateId: e.aggregateId,
      producer: e.producer as 'coordinator',
      events: [{ type: e.type, data: e.data } as EventDraft],
      commandId: e.commandId,
      causationId: null,
      correlationId: `corr-${e.aggregateId}`,
      occurredAt: e.occurredAt,
      expectedSeq: lastOnSubject.get(subject) ?? 0,
    });
    lastOnSubject.set(subject, seqs[0] as number);
  };

  const project = async () => {
    const runner = await ProjectionRunner.start({
      dataSource: ds,
      nc: ledger.nc,
      stream,
      projection: caseViewProjection,
    });
    await runner.catchUp();
    await runner.close();
  };
  const deps = () => ({ dataSource: ds, nc: ledger.nc, jsm: ledger.jsm, stream, namespace });

  beforeAll(async () => {
    ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'audit-test' });
    await ledger.provision();
    const history = generateHistory({ cases: 6, seed: 99, revisionLoops: 1, concurrency: 6 });
    caseId = history.caseIds[2] as string;
    for (const e of history.events) await append(e);
    ds = createProjectionDataSource({ url: PG_URL, schema: namespace });
    await ds.initialize();
    await migrateProjections(ds);
    catalog = new ProjectionCatalog(ds);
    await project();
  });
  afterAll(async () => {
    await ds.query(`drop schema if exists "${namespace}" cascade`);
    await ds.destroy();
    for (const s of [stream, `${stream}_DLQ`]) await ledger.jsm.streams.delete(s).catch(() => undefined);
    await ledger.close();
  });

  it('reads a clean case at the timeline sequences, the appends chaining its history', async () => {
    const audit = await auditCase(deps(), caseId);
    expect(audit).toMatchObject({ read: 'by_seq', drift: [], eventsAhead: 0 });
    expect(audit.eventsFolded).toBeGreaterThan(10);
    const scanned = await auditCase({ ...deps(), scan: true }, caseId);
    expect(scanned).toMatchObject({ read: 'scan', drift: [], eventsFolded: audit.eventsFolded });
  });

  it('catches an event the projection left out consistently (row re-folded without it) and names it', async () => {
    const { caseEvents } = await readCaseHistory(ledger.nc, stream, namespace, caseId, {
      withSources: false,
    });
    // A middle event, not the last on its subject: only the chain of expected sequences reveals it.
    const victim = caseEvents.find(
      (e, i) => i > 2 && caseEvents.slice(i + 1).some((x) => x.subject === e.subject),
    );
    if (!victim) throw new Error('no middle event in the generated case');
    const without = caseEvents.filter((e) => e.seq !== victim.seq);
    const folded = foldCase(without);
    if (folded.status === 'none') throw new Error('the case did not open');
    const row = caseRow(folded);
    await ds.query(`delete from ${catalog.tableOf('timeline', 1)} where seq = $1`, [victim.seq]);
    await ds.query(
      `update ${catalog.tableOf('cases', 1)} set status = $2, last_seq = $3, event_count = $4, updated_at = $5, last_event_type = $6, revision = $7, state = $8::jsonb where case_id = $1`,
      [
        caseId,
        row.status,
        row.last_seq,
        row.event_count,
        row.updated_at,
        row.last_event_type,
        row.revision,
        JSON.stringify(row.state),
      ],
    );
    const audit = await auditCase(deps(), caseId);
    expect(audit.read).toBe('scan');
    expect(audit.drift).toEqual(
      expect.arrayContaining([
        { field: `timeline[seq ${victim.seq}]`, stream: 'recorded', projection: null },
      ]),
    );
  });

  it('reports events past the checkpoint as lag, not drift', async () => {
    await project();
    const before = await auditCase({ ...deps(), scan: true }, caseId);
    await append({
      aggregate: 'case',
      aggregateId: caseId,
      producer: 'coordinator',
      type: 'ClarificationRequested',
      data: { missing: ['impact'], question: 'How many users are affected?' },
      commandId: 'late-question',
      occurredAt: '2026-11-29T21:00:00.000Z',
    });
    const audit = await auditCase(deps(), caseId);
    expect(audit).toMatchObject({ read: 'scan', eventsAhead: 1, eventsFolded: before.eventsFolded });
  });
});
