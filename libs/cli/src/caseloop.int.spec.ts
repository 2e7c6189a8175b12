import {
  caseViewProjection,
  createProjectionDataSource,
  migrateProjections,
  ProjectionRunner,
} from '@caseloop/projections';
import { draft } from '@caseloop/contracts';
import { connectLedger } from '@caseloop/ledger';
import { NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { connect, JetStreamManager, NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { generateHistory } from '../../projections/src/testing/case-history.generator';
import { createTestStream, publishEvents, publishRaw } from '../../projections/src/testing/publish-history';

jest.setTimeout(180_000);

const BIN = join(__dirname, '..', '..', '..', 'bin', 'caseloop.js');

describe('the caseloop CLI, run as a child process', () => {
  const namespace = uniqueSuffix('c');
  const stream = `T${namespace.toUpperCase()}`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let ds: DataSource;
  let caseIds: string[];
  let poisonSeq: number;
  const env = {
    ...process.env,
    CASELOOP_NATS_URL: NATS_URL,
    CASELOOP_NAMESPACE: namespace,
    CASELOOP_STREAM: stream,
    CASELOOP_DATABASE_URL: PG_URL,
    CASELOOP_DB_SCHEMA: namespace,
  };

  const cli = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BIN, ...args], { env, timeout: 120_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      });
    });

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
    jsm = await nc.jetstreamManager();
    await createTestStream(jsm, namespace, stream);
    const history = generateHistory({ cases: 30, seed: 21, revisionLoops: 1 });
    caseIds = history.caseIds;
    await publishEvents(nc, namespace, history.events.slice(0, 100));
    poisonSeq = await publishRaw(nc, `${namespace}.case.Cpoison.coordinator`, 'not json');
    await publishEvents(nc, namespace, history.events.slice(100));
    ds = createProjectionDataSource({ url: PG_URL, schema: namespace });
    await ds.initialize();
    await migrateProjections(ds);
    const runner = await ProjectionRunner.start({
      dataSource: ds,
      nc,
      stream,
      projection: caseViewProjection,
    });
    await runner.catchUp();
    await runner.close();
  });
  afterAll(async () => {
    await jsm.streams.delete(stream).catch(() => undefined);
    await ds.query(`drop schema if exists "${namespace}" cascade`);
    await ds.destroy();
    await nc.close();
  });

  it('audit exits 0 on a clean case and 1 naming the drifted fields of a tampered row', async () => {
    const caseId = caseIds[3] as string;
    const clean = await cli('audit', caseId);
    expect(clean.stderr).toBe('');
    expect(clean.stdout).toContain('clean: the projection equals the fold of the stream');
    expect(clean.code).toBe(0);

    await ds.query(
      `update "${namespace}".cases_v1 set status = case when status = 'approved' then 'rejected' else 'approved' end where case_id = $1`,
      [caseId],
    );
    await ds.query(`update "${namespace}".case_sources_v1 set via = 'link_review' where case_id = $1`, [
      caseId,
    ]);
    const drifted = await cli('audit', caseId);
    expect(drifted.code).toBe(1);
    expect(drifted.stdout).toMatch(
      /drift cases\.status: stream "[a-z_]+" ≠ projection "(approved|rejected)"/,
    );
    expect(drifted.stdout).toMatch(
      /drift case_sources\[discord-\d+\]\.via: stream "opened" ≠ projection "link_review"/,
    );

    const json = await cli('audit', caseId, '--json');
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { drift: { field: string }[] };
    expect(report.drift.map((d) => d.field)).toEqual(expect.arrayContaining(['cases.status']));
  });

  it('audit reports an event this release cannot read as not clean, with its sequence, exit 3', async () => {
    const caseId = caseIds[5] as string;
    const before = await cli('audit', caseId);
    expect(before.code).toBe(0);
    const ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'audit-test' });
    try {
      const [valid] = ledger.store.build({
        aggregate: 'case',
        aggregateId: caseId,
        producer: 'worker',
        commandId: 'from-a-newer-worker',
        causationId: null,
        correlationId: caseId,
        occurredAt: new Date().toISOString(),
        events: [draft('WorktreePrepared', { taskId: 'T1', revision: 'a'.repeat(40), path: 'w' } as never)],
      });
      const seq = await publishRaw(
        nc,
        `${namespace}.case.${caseId}.worker`,
        JSON.stringify({ ...valid, type: 'TaskShardedAcrossRunners' }),
      );
      const audit = await cli('audit', caseId);
      expect(audit.code).toBe(3);
      expect(audit.stdout).not.toContain('clean: the projection');
      expect(audit.stdout).toContain(
        `undecodable #${seq} ${namespace}.case.${caseId}.worker: unknown_event_type`,
      );
      expect(audit.stdout).toContain(`not clean: 1 event(s) this release cannot read (seq ${seq})`);
      const json = await cli('audit', caseId, '--json');
      expect(json.code).toBe(3);
      expect((JSON.parse(json.stdout) as { undecodable: { seq: number }[] }).undecodable).toEqual([
        expect.objectContaining({ seq }),
      ]);
    } finally {
      await ledger.close();
    }
  });

  it('replay prints the case and its sources from the stream; --json gives one event per line', async () => {
    const caseId = caseIds[5] as string;
    const human = await cli('replay', caseId);
    expect(human.code).toBe(0);
    const lines = human.stdout.trim().split('\n');
    expect(lines.some((l) => / case \S+ +coordinator +CaseOpened /.test(l))).toBe(true);
    expect(lines.some((l) => / source discord-\d+ +intake +SourceReceived /.test(l))).toBe(true);
    const json = await cli('replay', caseId, '--json');
    const events = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; aggregate: string; type: string });
    expect(events).toHaveLength(lines.length);
    expect(events.map((e) => e.seq)).toEqual([...events.map((e) => e.seq)].sort((a, b) => a - b));
    expect(events.find((e) => e.aggregate === 'case')?.type).toBe('CaseOpened');
  });

  it('lists dead letters with their sequence and rebuilds with plain progress lines off a terminal', async () => {
    const dead = await cli('dead-letters', '--json');
    expect(dead.code).toBe(0);
    expect(JSON.parse(dead.stdout.trim())).toMatchObject({
      seq: poisonSeq,
      code: 'malformed_json',
      projection: 'case-view',
    });

    const rebuilt = await cli('rebuild', 'case-view', '--samples', '5');
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stderr).toMatch(/case-view v2: catching up seq \d+\/\d+/);
    expect(rebuilt.stdout).toContain('readers now see v2; v1 retired');
    // The tampered rows of v1 are gone with v1: the rebuilt case audits clean.
    const audit = await cli('audit', caseIds[3] as string);
    expect(audit.code).toBe(0);
  });

  it('still takes the old name case-ledger for the case-view projection, warning that it is deprecated', async () => {
    const current = await cli('dead-letters', '--projection', 'case-view', '--json');
    const old = await cli('dead-letters', '--projection', 'case-ledger', '--json');
    expect(old.code).toBe(0);
    expect(old.stdout).toBe(current.stdout);
    expect(JSON.parse(old.stdout.trim().split('\n')[0] as string)).toMatchObject({ projection: 'case-view' });
    expect(old.stderr).toContain('the projection case-ledger is now called case-view');
    expect(current.stderr).toBe('');

    const unknown = await cli('dead-letters', '--projection', 'no-such-view');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no projection named no-such-view');
  });

  it('reports bad input and unreachable services as one line with exit code 2, without secrets', async () => {
    const unsafe = await cli('audit', 'C1.*');
    expect(unsafe.code).toBe(2);
    expect(unsafe.stderr.trim().split('\n')).toHaveLength(1);
    expect(unsafe.stderr).toContain('unsafe_id');

    const unreachable = await cli(
      '--database-url',
      'postgres://admin:hunter2@127.0.0.1:1/db',
      'dead-letters',
    );
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(/^caseloop: cannot connect to Postgres/);
    expect(unreachable.stderr).not.toContain('hunter2');

    const missing = await cli('replay', 'Cnosuchcase');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('has no events');
  });
});
