import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { foldCase, CaseView } from '@caseloop/case-model';
import { RecordedEvent } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { dropStackState, ServiceName, Stack, startStack } from '@caseloop/stack';
import { NatsCluster, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { Client } from 'pg';
import { ofType, runCli, until } from '../e2e/loop.fixture';
import { BUGS as ALL_BUGS, FEEDBACK } from './reports';

jest.setTimeout(900_000);

/**
 * The whole loop on a 3-node JetStream cluster (R3 ledger and lease bucket) with two replicas of
 * coordinator, worker, lease and evidence and two monitors, one projecting and one standing by.
 * A burst of reports goes in; meanwhile the stream leader's node is killed and restarted, later
 * one replica of every service (and the projecting monitor), and they come back.
 */
const BUGS = ALL_BUGS.slice(0, 4);
const REPORTERS = ['alice', 'bob'] as const;
const REVIEWERS = ['rita', 'bob'] as const;
const SCALED: ServiceName[] = ['coordinator', 'worker', 'lease', 'evidence'];

let cluster: NatsCluster;
let stack: Stack;
let ledger: Ledger;
let failed = true;

const caseEvents = async (caseId: string): Promise<RecordedEvent[]> =>
  (await ledger.store.load('case', caseId)).events;
const view = async (caseId: string) => foldCase(await caseEvents(caseId)) as CaseView;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caseloop-cluster-'));
  cluster = await NatsCluster.start({ dir: join(dir, 'nats') });
  const namespace = uniqueSuffix('cl');
  const started = Date.now();
  stack = await startStack({
    dir: join(dir, 'stack'),
    natsUrl: cluster.urls.join(','),
    ledgerReplicas: 3,
    databaseUrl: PG_URL,
    namespace,
    stream: `T${namespace.toUpperCase()}`,
    dbSchema: namespace,
    leaseBucket: `${namespace}-leases`,
    reviewers: [...REVIEWERS],
    readyTimeoutMs: 180_000,
    log: (l) => process.stdout.write(`${l}\n`),
    env: {
      // A lease held by a killed evidence replica lapses soon enough for the other one.
      evidence: { EVIDENCE_LEASE_TTL_MS: '15000', EVIDENCE_LEASE_RENEW_WITHIN_MS: '10000' },
      lease: { LEASE_SKEW_MS: '500' },
      monitor: { MONITOR_HEARTBEAT_MS: '5000' },
    },
  });
  // The first of each is up; the second replicas join (the second monitor finds the projections locked).
  for (const name of [...SCALED, 'monitor'] as const) await stack.addReplica(name);
  ledger = await connectLedger({ servers: cluster.urls, namespace, stream: stack.stream, name: 'e2e' });
  process.stdout.write(`cluster stack ${namespace} up in ${Date.now() - started} ms (${stack.dir}/logs)\n`);
});

afterAll(async () => {
  if (failed && stack) {
    for (const p of [...Object.values(stack.services), ...stack.replicas])
      process.stdout.write(`--- ${p.logFile}\n${p.logTail(2_000)}\n`);
  }
  await ledger?.close().catch(() => undefined);
  await stack?.stop();
  if (stack) await dropStackState({ ...stack, natsUrl: cluster.urls.join(',') }).catch(() => undefined);
  await cluster?.stop();
  if (stack && !failed) await rm(join(stack.dir, '..'), { recursive: true, force: true });
});

async function checkpoint(schema: string): Promise<number> {
  const pg = new Client({ connectionString: PG_URL });
  await pg.connect();
  try {
    const r = await pg.query(`select coalesce(min(seq), 0) as seq from "${schema}".projection_checkpoints`);
    return Number(r.rows[0]?.seq ?? 0);
  } finally {
    await pg.end();
  }
}

it('a burst through node loss and replica crashes: every report once, one task per case, no duplicate post, receipts confirmed, audits clean, projections equal to a rebuild', async () => {
  const t0 = Date.now();
  const d = stack.discord!;
  const post = (author: string, content: string, channel: 'bugs' | 'feedback' = 'bugs') =>
    d.say({
      authorId: d.userId(author),
      channelId: d.channelId(channel),
      content,
      ...(channel === 'feedback' ? { mentionsBot: true } : {}),
    });

  // The burst: every bug by both reporters (the second report of each is a duplicate of the first), and a piece of feedback.
  const sourceEvents = async (id: string) => (await ledger.store.load('source', `discord-${id}`)).events;
  const routed = async (id: string) => ofType(await sourceEvents(id), 'SourceRouted').at(-1)?.data ?? null;
  const reports: { id: string; bug: number }[] = [];
  for (const [bug, text] of BUGS.entries()) reports.push({ id: post(REPORTERS[0], text).id, bug });
  const idea = post('alice', FEEDBACK, 'feedback');
  // The second reporters write once the first reports are routed — by either coordinator replica,
  // each of which sees only its share of the events (docs/scaling.md: reports of one problem
  // routed at the very same instant by two replicas can still open two cases).
  for (const r of [...reports]) await until(`report ${r.id} routed`, 300_000, () => routed(r.id));
  for (const [bug, text] of BUGS.entries()) reports.push({ id: post(REPORTERS[1], text).id, bug });

  // Chaos 1: as soon as the first task is assigned, the stream leader's node dies; it comes back once a new leader serves.
  const chaos = (async () => {
    await until('a task assigned', 300_000, async () => {
      for (const r of reports) {
        const c = await routed(r.id);
        if (c && ofType(await caseEvents(c.caseId), 'TaskAssigned').length) return true;
      }
      return false;
    });
    const leader = await cluster.streamLeader(stack.stream);
    await cluster.kill(leader);
    const next = await until('a new stream leader', 60_000, async () => {
      const l = await cluster.streamLeader(stack.stream).catch(() => null);
      return l && l !== leader ? l : null;
    });
    process.stdout.write(`node ${leader} (stream leader) killed at ${Date.now() - t0} ms; ${next} leads\n`);
    await until('checks completed on some case', 300_000, async () => {
      for (const r of reports) {
        const c = await routed(r.id);
        if (c && ofType(await caseEvents(c.caseId), 'ChecksCompleted').length) return true;
      }
      return false;
    });
    await cluster.restart(leader);
    process.stdout.write(`node ${leader} back at ${Date.now() - t0} ms\n`);

    // Chaos 2: one replica of every service, and the projecting monitor, are SIGKILLed.
    for (const name of [...SCALED, 'monitor'] as const) await stack.kill(name, 'SIGKILL');
    const killedAt = (await ledger.jsm.streams.info(stack.stream)).state.last_seq;
    process.stdout.write(
      `a replica of every service killed at ${Date.now() - t0} ms (stream at ${killedAt})\n`,
    );
    // The stand-by monitor takes the projections over: the checkpoint moves past where the stream was.
    await until(
      'the stand-by monitor projecting',
      120_000,
      async () => (await checkpoint(stack.dbSchema)) > killedAt,
    );
    process.stdout.write(`stand-by monitor took over at ${Date.now() - t0} ms\n`);
    for (const name of [...SCALED, 'monitor'] as const) await stack.restart(name);
    process.stdout.write(`replicas back at ${Date.now() - t0} ms\n`);
  })();

  // Every bug case reaches the human decision; two reviewers decide.
  const caseOf = new Map<number, string>();
  for (const r of reports) {
    const c = await until(`report ${r.id} routed`, 300_000, () => routed(r.id));
    const known = caseOf.get(r.bug);
    if (known) expect(c.caseId).toBe(known);
    else caseOf.set(r.bug, c.caseId);
  }
  const ideaCase = (await until('feedback routed', 120_000, () => routed(idea.id))).caseId;
  const bugCases = [...caseOf.values()];
  expect(new Set(bugCases).size).toBe(BUGS.length);
  for (const caseId of bugCases)
    await until(
      `${caseId} awaiting review`,
      600_000,
      async () => (await view(caseId)).status === 'awaiting_review',
    );
  await chaos;
  for (const i of bugCases.keys()) {
    const first = reports.find((r) => r.bug === i)!;
    d.say({ authorId: d.userId(REVIEWERS[i % 2] as string), threadId: first.id, content: 'approve' });
  }
  for (const caseId of bugCases)
    await until(`${caseId} approved`, 180_000, async () => (await view(caseId)).status === 'approved');

  // Every report recorded once; one case per bug and one for the feedback; one task per bug case.
  for (const r of [...reports, idea]) {
    expect(ofType(await sourceEvents(r.id), 'SourceReceived')).toHaveLength(1);
  }
  const info = await ledger.jsm.streams.info(stack.stream, {
    subjects_filter: `${stack.namespace}.case.*.coordinator`,
  } as never);
  const cases = Object.keys((info.state as { subjects?: Record<string, number> }).subjects ?? {}).map(
    (s) => s.split('.')[2],
  );
  expect(new Set(cases)).toEqual(new Set([...bugCases, ideaCase]));
  for (const caseId of bugCases) {
    const events = await caseEvents(caseId);
    expect(ofType(events, 'TaskAssigned')).toHaveLength(1);
    const approvals = ofType(events, 'CaseApproved');
    expect(approvals).toHaveLength(1);
    // Every receipt delivery was confirmed.
    const receipts = ofType(events, 'DeliveryRequested').filter((x) => x.data.kind === 'receipt');
    const confirmed = new Set(ofType(events, 'DeliveryConfirmed').map((x) => x.data.deliveryId));
    expect(receipts.length).toBeGreaterThanOrEqual(2);
    for (const x of receipts) expect(confirmed).toContain(x.data.deliveryId);
  }
  expect(ofType(await caseEvents(ideaCase), 'TaskAssigned')).toHaveLength(0);

  // No duplicate post in any thread, one receipt in each.
  for (const r of reports) {
    const posts = d.messages(r.id).filter((m) => m.author.bot);
    const contents = posts.map((m) => m.content);
    expect(contents).toEqual([...new Set(contents)]);
    expect(posts.filter((m) => m.content.includes('caseloop receipt'))).toHaveLength(1);
  }

  // Audits clean, and a rebuild of every projection equals the live one.
  const cli = { ...stack.cliEnv, CASELOOP_NATS_URL: cluster.urls.join(',') };
  for (const caseId of [...bugCases, ideaCase]) {
    const audit = await until(`audit ${caseId}`, 120_000, async () => {
      const r = await runCli(['audit', caseId], cli);
      return /not applied yet/.test(r.out) ? null : r;
    });
    expect(audit.out).toContain('clean');
    expect(audit.code).toBe(0);
  }
  const rebuild = await runCli(['rebuild'], cli);
  expect(rebuild.code).toBe(0);
  const diffs = rebuild.out.match(/differing: \d+ \/ \d+/g) ?? [];
  expect(diffs.length).toBeGreaterThan(0);
  for (const line of diffs) expect(line).toBe('differing: 0 / 0');

  // The cluster's state is visible: every service reports the replicated stream and its server.
  const health = (await (await fetch(`${stack.services.coordinator.url}/healthz`)).json()) as {
    cluster: { replicas: number; unserialisedChecks: boolean; state: string };
  };
  expect(health.cluster).toMatchObject({
    replicas: 3,
    unserialisedChecks: !ledger.features.replicatedConcurrency,
  });
  failed = false;
  process.stdout.write(
    `cluster burst: ${reports.length + 1} reports in ${bugCases.length + 1} cases, report to approval in ${Date.now() - t0} ms\n`,
  );
});
