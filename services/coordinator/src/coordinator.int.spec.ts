import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { foldCase, CaseView } from '@caseloop/case-model';
import { run } from '@caseloop/cli';
import { draft, RecordedEvent } from '@caseloop/contracts';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { eventually, NATS_URL } from '@caseloop/testing';
import { CaseHandler } from './cases/case.handler';
import { ClockService } from './scheduling/clock.service';
import { coordinatorConfig, CoordinatorConfig } from './coordinator.config';
import { CoordinatorModule } from './coordinator.module';
import { loadSettings } from './coordinator.settings';
import { IdentityReadModel } from './identity/identity.read-model';
import { loadIdentityReadModel } from './identity/read-model.loader';
import {
  CoordinatorHarness,
  coordinatorHarness,
  messageIdOf,
  proveAndReceipt,
  REVIEWER,
} from './testing/coordinator.test-fixture';

jest.setTimeout(120_000);

const T = {
  search:
    'Search returns no results for words with accents: searching "Zürich" finds nothing. Expected the Zürich office tasks. Web app in Chrome 120, version 4.3.0. Blocks our support team; screenshot attached.',
  keytarA:
    'Since updating to 4.3.0 the Windows desktop app crashes on startup with "Uncaught Exception: Cannot find module keytar". Expected it to open as before. Our whole team is blocked. Screenshot attached.',
  keytarB:
    'Same crash here, Windows 11 desktop app 4.3.0: Cannot find module keytar on startup. Blocks our team too, screenshot attached.',
  calendar:
    'Google Calendar sync duplicates recurring events: our weekly standup shows up three times on the same day since version 4.2.0. Expected one copy. Everyone on the team is confused; screenshot attached.',
  calendarMedium:
    'After connecting Google our calendar shows some meetings twice, not sure if it is the sync',
  feedback: 'Feature request: it would be great to have a Gantt timeline view for projects.',
  private:
    'Checkout fails with a 500 Internal Server Error when applying a coupon on version 4.3.0 in Chrome. Expected the discount to apply. All customers are blocked from using promo codes; console log attached.\nCustomer: ACME Corp, order 77812\nour stripe key is sk_live_51HxYzAbCdEfGhIjKlMnOpQrStUvWx0123456789',
  stale:
    'PDF export cuts off columns past 8 in the table view on version 4.3.0 (Chrome, macOS). Expected all 12 columns. Blocks our monthly reporting; screenshot attached.',
  charts:
    'Dashboard charts are blank in Safari 17 on macOS: every widget shows an empty white box since version 4.2.0. Expected the graphs. Our managers cannot read reports; screenshot attached.',
  chartsMedium: 'graphs look empty on my mac sometimes, not sure why',
  invoiceA:
    'Invoice emails are sent twice since version 4.3.0: every customer receives two identical invoice emails after checkout. Expected one invoice email. Finance is flooded with complaints; screenshot attached.',
  invoiceB:
    'Duplicate invoice emails on 4.3.0: each customer gets the same invoice email twice after checkout. Finance swamped with complaints, screenshot attached.',
  vague: 'the notifications thing is weird again',
  vagueReply:
    'Android 14, app 4.3.1: I expected one push per comment but every notification arrives twice. Annoying for the whole team, screenshot attached.',
};
const SECRET = 'sk_live_51HxYzAbCdEfGhIjKlMnOpQrStUvWx0123456789';
const REV = 'a'.repeat(40);
const HEAD_1 = '1'.repeat(40);
const HEAD_2 = '2'.repeat(40);
const sid = (n: number) => `discord-${messageIdOf(n)}`;

describe('the coordinator service on real NATS', () => {
  let h: CoordinatorHarness;
  let svc: RunningService<CoordinatorConfig>;

  beforeAll(async () => {
    h = await coordinatorHarness();
    svc = await bootstrapService({
      name: 'coordinator',
      config: coordinatorConfig,
      module: (c) => CoordinatorModule.forRoot(c),
      env: h.env,
    });
  });
  afterAll(async () => {
    await svc?.close();
    await h?.cleanup();
  });

  const routed = (sourceId: string): Promise<RecordedEvent<'SourceRouted'>['data']> =>
    eventually(
      async () =>
        (await h.sourceEvents(sourceId))
          .filter((e): e is RecordedEvent<'SourceRouted'> => e.type === 'SourceRouted')
          .at(-1)?.data,
      { timeoutMs: 30_000, what: `SourceRouted for ${sourceId}` },
    ) as Promise<RecordedEvent<'SourceRouted'>['data']>;
  const caseState = async (caseId: string) => foldCase(await h.caseEvents(caseId)) as CaseView;
  const until = <T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> =>
    eventually(probe, { timeoutMs: 30_000, what }) as Promise<T>;
  const ofType = <K extends RecordedEvent['type']>(events: RecordedEvent[], type: K) =>
    events.filter((e): e is RecordedEvent<K> => e.type === type);

  const provenAndReceipted = (caseId: string, taskId: string, head: string, rendered?: string) =>
    proveAndReceipt(h, caseId, taskId, head, rendered);

  it('is healthy and consuming', async () => {
    const res = await fetch(`${svc.url}/healthz`);
    expect(await res.json()).toMatchObject({ service: 'coordinator', status: 'ready' });
  });

  it('opens one case when the same report is handled twice concurrently (three racing handlers)', async () => {
    const settings = loadSettings(svc.config);
    const log = { info: () => undefined, warn: () => undefined };
    const racers = [0, 1].map(
      () => new CaseHandler(h.ledger.store, new IdentityReadModel(settings.identity), settings, null, log),
    );
    const e = await h.report(1, T.search);
    await Promise.all(racers.map((r) => r.onSourceReceived(e)));
    const r = await routed(sid(1));
    expect(r.outcome).toBe('opened');
    await until(
      'task assigned',
      async () => ofType(await h.caseEvents(r.caseId), 'TaskAssigned').length === 1,
    );
    const all = await h.all();
    expect(ofType(all, 'SourceRouted').filter((x) => x.data.sourceId === sid(1))).toHaveLength(1);
    expect(
      ofType(all, 'CaseOpened')
        .filter((x) => x.data.sourceId === sid(1))
        .map((x) => x.aggregateId),
    ).toEqual([r.caseId]);
    expect(ofType(await h.caseEvents(r.caseId), 'TaskAssigned')).toHaveLength(1);
    expect(
      ofType(await h.caseEvents(r.caseId), 'DeliveryRequested').filter((d) => d.data.kind === 'ack'),
    ).toHaveLength(1);
  });

  it('links a duplicate from another reporter, routes the receipt to both threads, and awaits review only when both confirmed', async () => {
    await h.report(2, T.keytarA);
    const a = await routed(sid(2));
    expect(a.outcome).toBe('opened');
    await h.report(3, T.keytarB);
    const b = await routed(sid(3));
    expect(b).toMatchObject({ outcome: 'linked', caseId: a.caseId });
    expect(b.reasons.join('\n')).toMatch(/shared/);
    const linked = await until('linked delivery', async () =>
      ofType(await h.caseEvents(a.caseId), 'DeliveryRequested').find((d) => d.data.kind === 'linked'),
    );
    expect(linked.data).toMatchObject({ sourceId: sid(3) });
    expect(linked.data.content).toContain(a.caseId);

    const taskId = (await caseState(a.caseId)).taskId as string;
    await provenAndReceipted(a.caseId, taskId, HEAD_1);
    const receipts = await until('receipt deliveries', async () => {
      const ds = ofType(await h.caseEvents(a.caseId), 'DeliveryRequested').filter(
        (d) => d.data.kind === 'receipt',
      );
      return ds.length === 2 ? ds : null;
    });
    expect(receipts.map((d) => d.data.sourceId).sort()).toEqual([sid(2), sid(3)].sort());
    expect(ofType(await h.caseEvents(a.caseId), 'GateEvaluated')[0]?.data).toMatchObject({
      complete: true,
      outcome: 'pr_ready',
    });

    await h.confirmDeliveries(a.caseId, (d) => d.data.kind === 'receipt' && d.data.sourceId === sid(2));
    await h.confirmDeliveries(a.caseId, (d) => d.data.kind !== 'receipt');
    // One of two threads confirmed: not yet awaiting review.
    await until(
      'state folded',
      async () => (await caseState(a.caseId)).deliveries.filter((d) => d.confirmed).length >= 2,
    );
    expect((await caseState(a.caseId)).status).not.toBe('awaiting_review');
    await h.confirmDeliveries(a.caseId);
    await until('awaiting review', async () => (await caseState(a.caseId)).status === 'awaiting_review');
    const awaiting = ofType(await h.caseEvents(a.caseId), 'CaseAwaitingReview')[0];
    expect(awaiting?.data.confirmedSources.sort()).toEqual([sid(2), sid(3)].sort());

    await h.append('case', a.caseId, 'intake', 'cmd-approve', [
      draft('ReviewerDecided', {
        reviewerId: REVIEWER,
        messageId: '660000000000000001',
        decision: 'approve',
        text: null,
      }),
    ]);
    await until('approved', async () => (await caseState(a.caseId)).status === 'approved');
    expect(ofType(await h.caseEvents(a.caseId), 'CaseApproved')[0]?.data).toMatchObject({
      reviewerId: REVIEWER,
      branch: `caseloop/${a.caseId}`,
    });
  });

  it('holds a medium match until a human settles it: same links it, different opens its own case', async () => {
    await h.report(4, T.calendar);
    const base = await routed(sid(4));
    await h.report(5, T.calendarMedium);
    const held = await routed(sid(5));
    expect(held).toMatchObject({ outcome: 'held', caseId: base.caseId });
    const req = await until(
      'link review',
      async () => ofType(await h.caseEvents(base.caseId), 'LinkReviewRequested')[0],
    );
    const ack = ofType(await h.caseEvents(base.caseId), 'DeliveryRequested').find(
      (d) => d.data.kind === 'link_review',
    );
    expect(ack?.data).toMatchObject({ sourceId: sid(5) });
    expect(ack?.data.content).toContain(`same ${req.data.reviewId}`);
    expect((await caseState(base.caseId)).sources.map((s) => s.sourceId)).toEqual([sid(4)]);

    await h.append('case', base.caseId, 'intake', 'cmd-same', [
      draft('LinkReviewSettled', {
        reviewerId: REVIEWER,
        messageId: '660000000000000002',
        reviewId: req.data.reviewId,
        verdict: 'same',
      }),
    ]);
    await until('linked by review', async () =>
      ofType(await h.caseEvents(base.caseId), 'SourceLinked').find((x) => x.data.via === 'link_review'),
    );
    expect((await caseState(base.caseId)).sources.map((s) => s.sourceId)).toEqual([sid(4), sid(5)]);

    // Another medium match, settled as different: it gets its own case.
    await h.report(12, T.charts);
    const charts = await routed(sid(12));
    await h.report(6, T.chartsMedium);
    const held2 = await routed(sid(6));
    expect(held2).toMatchObject({ outcome: 'held', caseId: charts.caseId });
    const req2 = await until('second review', async () =>
      ofType(await h.caseEvents(charts.caseId), 'LinkReviewRequested').find(
        (x) => x.data.sourceId === sid(6),
      ),
    );
    await h.append('case', charts.caseId, 'intake', 'cmd-different', [
      draft('LinkReviewSettled', {
        reviewerId: REVIEWER,
        messageId: '660000000000000003',
        reviewId: req2.data.reviewId,
        verdict: 'different',
      }),
    ]);
    const own = await until('own case', async () => {
      const r = await routed(sid(6));
      return r.outcome === 'opened' ? r : null;
    });
    expect(own.caseId).not.toBe(charts.caseId);
    expect((await caseState(charts.caseId)).sources.map((s) => s.sourceId)).toEqual([sid(12)]);
    await until('opened', async () => ofType(await h.caseEvents(own.caseId), 'CaseOpened')[0]);
  });

  it('never dispatches feedback without a human, then does once a reviewer makes it actionable', async () => {
    await h.report(7, T.feedback);
    const r = await routed(sid(7));
    const ack = await until('ack', async () =>
      ofType(await h.caseEvents(r.caseId), 'DeliveryRequested').find((d) => d.data.kind === 'ack'),
    );
    expect(ack.data.content).toMatch(/product feedback/);
    const s = await caseState(r.caseId);
    expect(s).toMatchObject({ status: 'feedback', classification: 'feedback', taskId: null });
    // A later event on the case does not dispatch it either.
    await h.confirmDeliveries(r.caseId);
    await until('confirmed', async () => (await caseState(r.caseId)).deliveries.every((d) => d.confirmed));
    expect(ofType(await h.caseEvents(r.caseId), 'TaskAssigned')).toHaveLength(0);

    await h.append('case', r.caseId, 'intake', 'cmd-actionable', [
      draft('CaseMadeActionable', {
        reviewerId: REVIEWER,
        messageId: '660000000000000004',
        note: 'worth doing',
      }),
    ]);
    const task = await until('task', async () => ofType(await h.caseEvents(r.caseId), 'TaskAssigned')[0]);
    expect(task.data.repository).toBe('tandem-web');
  });

  it('keeps a private token and customer context out of the brief, every delivery and the receipt delivery', async () => {
    await h.report(8, T.private);
    const r = await routed(sid(8));
    const task = await until('task', async () => ofType(await h.caseEvents(r.caseId), 'TaskAssigned')[0]);
    expect(task.data.brief).toContain('500 Internal Server Error');
    await provenAndReceipted(
      r.caseId,
      task.data.taskId,
      HEAD_1,
      `Receipt for the coupon fix. Reproduced with key ${SECRET}.`,
    );
    await until('receipt routed', async () =>
      ofType(await h.caseEvents(r.caseId), 'DeliveryRequested').find((d) => d.data.kind === 'receipt'),
    );
    const coordinatorOut = (await h.caseEvents(r.caseId)).filter((e) => e.producer === 'coordinator');
    const text = JSON.stringify(coordinatorOut);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('ACME');
    expect(text).not.toContain('77812');
    const scope = ofType(coordinatorOut, 'PrivacyScopeSet')[0];
    expect(scope?.data.categories).toEqual(expect.arrayContaining(['private_context']));
  });

  it('asks one question for a vague report and takes the answer from the thread', async () => {
    await h.report(9, T.vague);
    const r = await routed(sid(9));
    const q = await until('question', async () =>
      ofType(await h.caseEvents(r.caseId), 'DeliveryRequested').find((d) => d.data.kind === 'question'),
    );
    expect(q.data.content).toContain(r.caseId);
    expect(ofType(await h.caseEvents(r.caseId), 'DeliveryRequested')).toHaveLength(1);
    await h.report(10, T.vagueReply, { threadId: messageIdOf(9) });
    const reply = await routed(sid(10));
    expect(reply).toMatchObject({ outcome: 'thread', caseId: r.caseId });
    await until('task', async () => ofType(await h.caseEvents(r.caseId), 'TaskAssigned')[0]);
    expect(ofType(await h.caseEvents(r.caseId), 'SourceLinked')[0]?.data.via).toBe('thread');
  });

  it('marks the proof stale when the target moved after checks, and resumes the same task id', async () => {
    await h.report(11, T.stale);
    const r = await routed(sid(11));
    const task = await until('task', async () => ofType(await h.caseEvents(r.caseId), 'TaskAssigned')[0]);
    const taskId = task.data.taskId;
    await h.append('case', r.caseId, 'worker', 'w-stale-checks', [
      draft('ChecksCompleted', {
        taskId,
        revision: REV,
        targetHead: HEAD_1,
        passed: true,
        results: [
          {
            name: 'lint',
            kind: 'lint',
            outcome: 'passed',
            revision: REV,
            durationMs: 5,
            exitCode: 0,
            outputSha256: null,
            outputBytes: 0,
          },
        ],
      }),
    ]);
    await until('validating', async () => (await caseState(r.caseId)).status === 'validating');
    await h.append('case', r.caseId, 'worker', 'w-stale-moved', [
      draft('TargetRevisionChecked', {
        taskId,
        recorded: HEAD_1,
        head: HEAD_2,
        outcome: 'moved',
        rebasedRevision: null,
      }),
    ]);
    const resumed = await until(
      'resumed',
      async () => ofType(await h.caseEvents(r.caseId), 'TaskResumed')[0],
    );
    expect(resumed.data).toMatchObject({ taskId, reason: 'stale_proof' });
    expect(ofType(await h.caseEvents(r.caseId), 'ProofMarkedStale')[0]?.data).toMatchObject({
      taskId,
      provenRevision: REV,
      targetHead: HEAD_2,
    });
    // A receipt built on the old proof is judged stale too and never routed.
    await provenAndReceipted(r.caseId, taskId, HEAD_1);
    const gate = await until('gate', async () => ofType(await h.caseEvents(r.caseId), 'GateEvaluated')[0]);
    expect(gate.data).toMatchObject({ complete: false, targetHead: HEAD_2 });
    expect(
      ofType(await h.caseEvents(r.caseId), 'DeliveryRequested').filter((d) => d.data.kind === 'receipt'),
    ).toHaveLength(0);
    expect(new Set(ofType(await h.caseEvents(r.caseId), 'TaskResumed').map((x) => x.data.taskId))).toEqual(
      new Set([taskId]),
    );
    expect(ofType(await h.caseEvents(r.caseId), 'TaskAssigned')).toHaveLength(1);
  });

  it('answers caseloop stats and identity replay --ledger from the same ledger', async () => {
    const cli = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await run(
        args,
        { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false },
        {
          CASELOOP_NATS_URL: NATS_URL,
          CASELOOP_NAMESPACE: h.namespace,
          CASELOOP_STREAM: h.stream,
        },
      );
      return { code, out, err };
    };
    const stats = await cli('stats', '--json');
    expect(stats.code).toBe(0);
    const s = JSON.parse(stats.out[0] as string);
    // keytarB linked by match, calendarMedium linked by review.
    expect(s.duplicatePrevention.linked).toBeGreaterThanOrEqual(2);
    expect(s.duplicatePrevention.denominator).toBe(
      s.duplicatePrevention.opened + s.duplicatePrevention.linked + s.duplicatePrevention.held,
    );
    // The keytar receipt was confirmed in both threads; the private-case receipt was never confirmed.
    expect(s.receiptCompleteness).toMatchObject({ numerator: 1, denominator: 2 });
    expect(s.staleProofRejections.numerator).toBeGreaterThanOrEqual(1);
    expect(s.cycleTime.verifiedCompletions).toBe(1);
    const human = await cli('stats', '--since', '1d');
    expect(human.out.join('\n')).toMatch(/duplicate prevention .* linked \/ \d+ reports/);

    const search = await routed(sid(1));
    const file = join(h.dir, 'reports.jsonl');
    writeFileSync(
      file,
      [
        {
          id: 'x1',
          text: 'searching for Zürich or other words with accents returns no results in the web app (4.3.0)',
          created: '2026-11-29T13:00:00Z',
        },
        {
          id: 'x2',
          text: 'Feature idea: colour-coded labels for tasks would be nice',
          created: '2026-11-29T13:01:00Z',
          author: 'sam',
        },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const replay = await cli('identity', 'replay', file, '--ledger');
    expect(replay.code).toBe(0);
    const lines = replay.out.map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({
      id: 'x1',
      decision: 'link',
      caseId: search.caseId,
      matchedWith: search.caseId,
    });
    expect(lines[1]).toMatchObject({ id: 'x2', decision: 'new', caseId: 'case-x2' });
    const empty = await cli('identity', 'replay', file);
    expect(empty.out.map((l) => JSON.parse(l).decision)).toEqual(['new', 'new']);
  });

  it('tells both threads once that the receipt went stale when the target moves during review, and refuses a late approval', async () => {
    await h.report(14, T.invoiceA);
    const a = await routed(sid(14));
    expect(a.outcome).toBe('opened');
    await h.report(15, T.invoiceB);
    expect(await routed(sid(15))).toMatchObject({ outcome: 'linked', caseId: a.caseId });
    const caseId = a.caseId;
    const taskId = (await until('task', async () => ofType(await h.caseEvents(caseId), 'TaskAssigned')[0]))
      .data.taskId;
    await provenAndReceipted(caseId, taskId, HEAD_1);
    await until('receipt deliveries', async () => {
      const ds = ofType(await h.caseEvents(caseId), 'DeliveryRequested').filter(
        (d) => d.data.kind === 'receipt',
      );
      return ds.length === 2;
    });
    await h.confirmDeliveries(caseId);
    await until('awaiting review', async () => (await caseState(caseId)).status === 'awaiting_review');
    const staleNotices = async () =>
      ofType(await h.caseEvents(caseId), 'DeliveryRequested').filter((d) =>
        d.data.deliveryId.startsWith('stale-'),
      );
    expect(await staleNotices()).toEqual([]);

    const [moved] = await h.append('case', caseId, 'worker', 'w-invoice-moved', [
      draft('TargetRevisionChecked', {
        taskId,
        recorded: HEAD_1,
        head: HEAD_2,
        outcome: 'moved',
        rebasedRevision: REV,
      }),
    ]);
    const notices = await until('a stale notice per thread', async () => {
      const ns = await staleNotices();
      return ns.length === 2 ? ns : null;
    });
    const events = await h.caseEvents(caseId);
    const stale = ofType(events, 'ProofMarkedStale').at(-1);
    expect(stale?.data).toMatchObject({ taskId, provenRevision: REV, targetHead: HEAD_2 });
    expect(notices.map((n) => [n.data.kind, n.data.sourceId, n.data.place.messageId]).sort()).toEqual(
      [
        ['notice', sid(14), messageIdOf(14)],
        ['notice', sid(15), messageIdOf(15)],
      ].sort(),
    );
    for (const n of notices) {
      expect(n.seq).toBeGreaterThan(stale!.seq);
      expect(n.data.content).toContain(`moved to \`${HEAD_2.slice(0, 12)}\``);
      expect(n.data.content).toMatch(/receipt above is out of date/);
    }

    // Redelivered to a fresh handler (another replica, a restart): nothing new.
    const settings = loadSettings(svc.config);
    const replica = new CaseHandler(
      h.ledger.store,
      new IdentityReadModel(settings.identity),
      settings,
      null,
      {
        info: () => undefined,
        warn: () => undefined,
      },
    );
    const before = (await h.caseEvents(caseId)).length;
    await replica.onCaseEvent(moved as RecordedEvent);
    expect((await h.caseEvents(caseId)).length).toBe(before);

    // A reviewer approving from the old receipt gets the refusal, nothing is approved.
    await h.append('case', caseId, 'intake', 'cmd-invoice-approve', [
      draft('ReviewerDecided', {
        reviewerId: REVIEWER,
        messageId: '660000000000000014',
        decision: 'approve',
        text: null,
      }),
    ]);
    const refusal = await until('the refusal', async () =>
      ofType(await h.caseEvents(caseId), 'DeliveryRequested').find(
        (d) => d.data.deliveryId === 'notice-660000000000000014',
      ),
    );
    expect(refusal.data.content).toMatch(/cannot be approved yet/);
    expect(ofType(await h.caseEvents(caseId), 'CaseApproved')).toEqual([]);
    expect(await staleNotices()).toHaveLength(2);
  });

  it('ticks the clock once per slot and re-examines open cases, finishing an interrupted awaiting-review', async () => {
    await h.report(
      13,
      'Kanban drag and drop reverts on Firefox 121: the card snaps back, PATCH /api/v2/tasks/1/position returns 409 Conflict. Expected the new order to stick. Blocks planning; log attached.',
    );
    const r = await routed(sid(13));
    const task = await until('task', async () => ofType(await h.caseEvents(r.caseId), 'TaskAssigned')[0]);
    await provenAndReceipted(r.caseId, task.data.taskId, HEAD_1);
    await until('receipt routed', async () =>
      ofType(await h.caseEvents(r.caseId), 'DeliveryRequested').find((d) => d.data.kind === 'receipt'),
    );
    // The receipts are confirmed while no coordinator consumes: only the clock's re-examination can notice.
    await svc.close();
    await h.confirmDeliveries(r.caseId);
    const settings = loadSettings(svc.config);
    const model = new IdentityReadModel(settings.identity);
    const viaConsumer = await loadIdentityReadModel(h.ledger, model, 'consumer');
    const direct = new IdentityReadModel(settings.identity);
    expect(await loadIdentityReadModel(h.ledger, direct, 'direct')).toBe(viaConsumer);
    expect(direct.openCases().sort()).toEqual(model.openCases().sort());
    const log = { info: () => undefined, warn: () => undefined };
    const clock = new ClockService(
      h.ledger.store,
      new CaseHandler(h.ledger.store, model, settings, null, log),
      model,
      3_600_000,
      log,
    );
    expect((await caseState(r.caseId)).status).not.toBe('awaiting_review');
    const first = await clock.tick();
    const again = await clock.tick();
    expect(again.tickId).toBe(first.tickId);
    expect(first.reexamined).toBe(model.openCases().length);
    expect(model.openCases()).toContain(r.caseId);
    const ticks = ofType(await h.all(), 'ClockTicked');
    expect(ticks).toHaveLength(1);
    expect(ticks[0]?.subject).toBe(`${h.namespace}.ops.clock.coordinator`);
    expect(ticks[0]?.data.deltaRequestId).toBe(`delta-${first.tickId}`);
    expect((await caseState(r.caseId)).status).toBe('awaiting_review');
  });

  it('skips a source it already routed (a re-fetched message never opens a second case)', async () => {
    const before = (await h.all()).length;
    const e = (await h.sourceEvents(sid(1))).find(
      (x): x is RecordedEvent<'SourceReceived'> => x.type === 'SourceReceived',
    )!;
    const settings = loadSettings(svc.config);
    const fresh = new CaseHandler(h.ledger.store, new IdentityReadModel(settings.identity), settings, null, {
      info: () => undefined,
      warn: () => undefined,
    });
    await fresh.onSourceReceived(e);
    const all = await h.all();
    expect(ofType(all, 'CaseOpened').filter((x) => x.data.sourceId === sid(1))).toHaveLength(1);
    expect(all.length).toBe(before);
  });
});
