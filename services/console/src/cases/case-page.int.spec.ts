import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaseView, foldCase, ledgerStats } from '@caseloop/case-model';
import { draft, EventDraft, Producer, RecordedEvent } from '@caseloop/contracts';
import { defaultSeed, LocalDiscord } from '@caseloop/discord-sandbox';
import { connectLedger, Ledger, readEvent } from '@caseloop/ledger';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { BoundedStreamReader } from '@caseloop/projections';
import { eventually, LocalS3, NATS_URL, PG_URL, startLocalS3, uniqueSuffix } from '@caseloop/testing';
import { Browser, chromium, Page } from 'playwright-core';
import { Client } from 'pg';
import { coordinatorConfig, CoordinatorConfig } from '../../../coordinator/src/coordinator.config';
import { CoordinatorModule } from '../../../coordinator/src/coordinator.module';
import { evidenceConfig, EvidenceConfig } from '../../../evidence/src/evidence.config';
import { EvidenceModule } from '../../../evidence/src/evidence.module';
import { S3ArtifactStore } from '../../../evidence/src/storage/s3-artifact.store';
import { intakeConfig, IntakeConfig } from '../../../intake/src/intake.config';
import { IntakeModule } from '../../../intake/src/intake.module';
import { monitorConfig, MonitorConfig } from '../../../monitor/src/monitor.config';
import { MonitorModule } from '../../../monitor/src/monitor.module';
import { consoleConfig, ConsoleConfig } from '../console.config';
import { ConsoleModule } from '../console.module';
import type { CaseDetailView, CaseListView, OpsFindingsView } from './case-page.view';

jest.setTimeout(240_000);

interface ImageLike {
  complete: boolean;
  naturalWidth: number;
}
/** `eventually` for probes that answer null until the condition holds. */
const until = <T>(
  probe: () => Promise<T | null>,
  opts: { timeoutMs: number; intervalMs?: number; what: string },
): Promise<T> => eventually(probe, opts) as Promise<T>;

const INJECTION = `<img src=x onerror=alert(1)><script>alert('xss')</script>`;
/** The first line becomes the case title; the rest is the report's private-by-default body. */
const ALICE = `Desktop app crashes on startup ${INJECTION}
Since updating to 4.3.0 the Windows desktop app crashes on startup with "Uncaught Exception: Cannot find module keytar". Expected it to open as before. Our whole team is blocked. Screenshot attached.`;
const BOB =
  'Same crash here, Windows 11 desktop app 4.3.0: Cannot find module keytar on startup. Blocks our team too, screenshot attached.';
const BODY_ONLY = 'Our whole team is blocked';
/** Markup in a receipt (a check name, a residual risk) is shown as text, like a title's. */
const RECEIPT_INJECTION = `<img src=y onerror=alert(2)><b>loud</b>`;
const REV = 'a'.repeat(40);
const HEAD = '1'.repeat(40);
const SCREENSHOTS = process.env.CASE_PAGE_SCREENSHOTS ?? tmpdir();

describe('the case page, served by the console over a case that came in through the local Discord', () => {
  const namespace = uniqueSuffix('cp');
  const stream = `T${namespace.toUpperCase()}`;
  const schema = uniqueSuffix('cp');
  let dir = '';
  let discord: LocalDiscord;
  let ledger: Ledger;
  let s3: LocalS3;
  let intake: RunningService<IntakeConfig>;
  let coordinator: RunningService<CoordinatorConfig>;
  let evidence: RunningService<EvidenceConfig>;
  let monitor: RunningService<MonitorConfig>;
  let console_: RunningService<ConsoleConfig>;
  let pageUrl = '';
  let browser: Browser;
  let caseId = '';

  const secretFile = async (name: string, value: string) => {
    const file = join(dir, name);
    await writeFile(file, value);
    await chmod(file, 0o600);
    return file;
  };
  const platformEnv = (name: string) => ({
    CASELOOP_NAMESPACE: namespace,
    LEDGER_STREAM: stream,
    NATS_URL,
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    CONSUMER_NAME: `${name}_${namespace}`,
  });
  const caseEvents = async (): Promise<RecordedEvent[]> => (await ledger.store.load('case', caseId)).events;
  const append = (producer: Producer, commandId: string, events: EventDraft[]) =>
    ledger.store.handle({
      aggregate: 'case',
      aggregateId: caseId,
      producer,
      commandId,
      causationId: null,
      correlationId: `corr-${caseId}`,
      occurredAt: new Date().toISOString(),
      consistency: 'producer',
      decide: () => events,
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'case-page-'));
    ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'case-page-test' });
    await ledger.provision();
    discord = await LocalDiscord.start(defaultSeed());
    const bugs = discord.channelId('bugs');
    const binding = join(dir, 'binding.json');
    await writeFile(
      binding,
      JSON.stringify({
        guildId: discord.guildId,
        channels: [{ id: bugs, mode: 'open' }],
        reporters: [discord.userId('alice'), discord.userId('bob')],
        reporterRoles: [],
        reviewers: [discord.userId('rita')],
        limits: { inboundMaxChars: 2000, reportsPerDayPerUser: 50, replyChunkSize: 2000 },
      }),
    );
    const repositories = join(dir, 'repositories.yaml');
    await writeFile(
      repositories,
      'repositories:\n  - id: desktop\n    url: https://git.example.com/desktop.git\n    targetBranch: main\n    checks:\n      - { name: unit, kind: focused_test, command: ["true"], timeoutMs: 1000 }\n',
    );
    const routes = join(dir, 'routes.yaml');
    await writeFile(
      routes,
      `channels:\n  - { channelId: "${bugs}", repository: desktop }\nowners: { desktop: desktop-team }\n`,
    );

    s3 = await startLocalS3({ dir: join(dir, 's3') });

    intake = await bootstrapService({
      name: 'intake',
      config: intakeConfig,
      module: (c) => IntakeModule.forRoot(c),
      env: {
        ...platformEnv('intake'),
        INTAKE_BINDING_FILE: binding,
        INTAKE_DISCORD_TOKEN_FILE: await secretFile('discord-token', discord.token),
        INTAKE_DISCORD_API_URL: discord.apiUrl,
        INTAKE_FAST_IDENTIFY: 'true',
      },
    });
    coordinator = await bootstrapService({
      name: 'coordinator',
      config: coordinatorConfig,
      module: (c) => CoordinatorModule.forRoot(c),
      env: {
        ...platformEnv('coordinator'),
        COORDINATOR_REPOSITORIES_FILE: repositories,
        COORDINATOR_ROUTES_FILE: routes,
        COORDINATOR_CLOCK_INTERVAL_MS: '0',
      },
    });
    // The evidence service serves the stable evidence links; its consumer stays off because this
    // test plays the client-validation facts itself (through the service's own S3 store).
    evidence = await bootstrapService({
      name: 'evidence',
      config: evidenceConfig,
      module: (c) => EvidenceModule.forRoot(c),
      consumer: false,
      env: {
        ...platformEnv('evidence'),
        EVIDENCE_REPOSITORIES_FILE: repositories,
        EVIDENCE_DIR: join(dir, 'evidence'),
        EVIDENCE_S3_ENDPOINT: s3.endpoint,
        EVIDENCE_S3_BUCKET: `evidence-${namespace}`.slice(0, 63),
        EVIDENCE_S3_ACCESS_KEY_ID_FILE: await secretFile('s3-key-id', s3.accessKeyId),
        EVIDENCE_S3_SECRET_ACCESS_KEY_FILE: await secretFile('s3-secret', s3.secretAccessKey),
      },
    });
    // The monitor hosts the case-view projection (catching up from the first event); the console serves the page.
    monitor = await bootstrapService({
      name: 'monitor',
      config: monitorConfig,
      module: (c) => MonitorModule.forRoot(c),
      consumer: false,
      env: {
        ...platformEnv('monitor'),
        CASELOOP_DATABASE_URL_FILE: await secretFile('database-url', PG_URL),
        CASELOOP_DB_SCHEMA: schema,
        MONITOR_HEARTBEAT_MS: '0',
      },
    });
    // Open on loopback, without sign-in: the explicit setting (sign-in is tested in console-sign-in.int.spec.ts).
    console_ = await bootstrapService({
      name: 'console',
      config: consoleConfig,
      module: (c) => ConsoleModule.forRoot(c),
      consumer: false,
      env: {
        ...platformEnv('console'),
        CASELOOP_DATABASE_URL_FILE: await secretFile('console-database-url', PG_URL),
        CASELOOP_DB_SCHEMA: schema,
        CONSOLE_AUTH: 'loopback',
        CONSOLE_REFRESH_S: '0',
        EVIDENCE_PUBLIC_URL: evidence.url,
      },
    });
    pageUrl = console_.url;
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    for (const svc of [console_, monitor, evidence, coordinator, intake])
      await svc?.close().catch(() => undefined);
    const pg = new Client({ connectionString: PG_URL });
    await pg.connect();
    await pg.query(`drop schema if exists "${schema}" cascade`);
    await pg.end();
    for (const s of [stream, `${stream}_DLQ`]) await ledger?.jsm.streams.delete(s).catch(() => undefined);
    await ledger?.close();
    await discord?.close();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const projected = (probe: (v: CaseDetailView) => boolean, what: string): Promise<CaseDetailView> =>
    until(
      async () => {
        const res = await fetch(`${pageUrl}/cases/${caseId}.json`);
        if (res.status !== 200) return null;
        const v = (await res.json()) as CaseDetailView;
        return probe(v) ? v : null;
      },
      { timeoutMs: 60_000, intervalMs: 200, what },
    );

  it('is served by the console on loopback, not by the monitor', async () => {
    expect((await fetch(`${console_.url}/healthz`)).status).toBe(200);
    expect(new URL(pageUrl).hostname).toBe('127.0.0.1');
    expect((await fetch(`${monitor.url}/cases`)).status).toBe(404);
    // A foreign host name (DNS rebinding) gets nothing from the unguarded loopback page.
    expect(await statusWithHost(`${pageUrl}/cases`, 'attacker.example')).toBe(421);
    expect(await statusWithHost(`${pageUrl}/cases`, `localhost:${new URL(pageUrl).port}`)).toBe(200);
  });

  it('follows a report from the local Discord through intake and the coordinator to a receipt confirmed in both threads', async () => {
    const bugs = discord.channelId('bugs');
    const first = discord.say({ authorId: discord.userId('alice'), channelId: bugs, content: ALICE });
    const opened = await until(
      async () => {
        const { events } = await ledger.store.load('source', `discord-${first.id}`);
        const routed = events.find((e) => e.type === 'SourceRouted');
        return routed?.type === 'SourceRouted' ? routed.data : null;
      },
      { timeoutMs: 60_000, what: 'the first report routed' },
    );
    expect(opened.outcome).toBe('opened');
    caseId = opened.caseId;
    const second = discord.say({ authorId: discord.userId('bob'), channelId: bugs, content: BOB });
    const linked = await until(
      async () => {
        const { events } = await ledger.store.load('source', `discord-${second.id}`);
        const routed = events.find((e) => e.type === 'SourceRouted');
        return routed?.type === 'SourceRouted' ? routed.data : null;
      },
      { timeoutMs: 60_000, what: 'the second report routed' },
    );
    expect(linked).toMatchObject({ outcome: 'linked', caseId });
    const state = await until(
      async () => {
        const s = foldCase(await caseEvents());
        return s.status !== 'none' && s.taskId && s.deliveries.filter((d) => d.confirmed).length >= 2
          ? (s as CaseView)
          : null;
      },
      { timeoutMs: 60_000, what: 'task assigned and both acknowledgements confirmed' },
    );
    const taskId = state.taskId as string;

    // The client phase: a real PNG stored by the evidence service's own S3 store (read back, verified).
    const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
    await page.setContent(
      '<body style="margin:0;font:28px sans-serif;background:#eef6ff"><h1 style="padding:40px">Desktop app · signed in</h1><p style="padding:0 40px">keytar loaded ✓</p></body>',
    );
    const png = await page.screenshot();
    await page.close();
    const store = evidence.app.get(S3ArtifactStore);
    await store.ensureBucket();
    const stored = await store.store({
      caseId,
      revision: REV,
      body: png,
      contentType: 'image/png',
      tags: { case: caseId, capture: 'cap1', lease: '7' },
    });
    if (stored.status !== 'stored') throw new Error(`not stored: ${stored.status}`);
    const link = `${evidence.url}/evidence/${stored.key}`;

    const check = {
      name: 'unit',
      kind: 'focused_test' as const,
      outcome: 'passed' as const,
      revision: REV,
      durationMs: 812,
      exitCode: 0,
      outputSha256: null,
      outputBytes: 0,
    };
    await append('worker', 'cp-worker', [
      draft('ChecksCompleted', { taskId, revision: REV, targetHead: HEAD, passed: true, results: [check] }),
      draft('BranchPushed', {
        taskId,
        branch: `caseloop/${caseId}`,
        revision: REV,
        baseRevision: HEAD,
        created: true,
        draftPullRequestUrl: null,
      }),
    ]);
    await append('evidence', 'cp-client', [
      draft('ClientValidationStarted', {
        taskId,
        revision: REV,
        flow: 'startup',
        resource: 'browser:default',
      }),
      draft('CaptureTaken', {
        taskId,
        revision: REV,
        captureId: 'cap1',
        resource: 'browser:default',
        leaseToken: 7,
        step: 'app opened',
        page: { url: 'http://127.0.0.1:5173/', title: 'Desktop app' },
        sha256: stored.sha256,
        takenAt: new Date().toISOString(),
      }),
      draft('ClientValidationCompleted', {
        taskId,
        revision: REV,
        outcome: 'passed',
        reason: null,
        captureIds: ['cap1'],
      }),
      draft('ArtifactReviewed', {
        artifactId: 'art1',
        kind: 'screenshot',
        sha256: stored.sha256,
        decision: 'cleared',
        redactions: [],
        basis: 'fixture data only',
      }),
      draft('ArtifactStored', {
        artifactId: 'art1',
        kind: 'screenshot',
        key: stored.key,
        sha256: stored.sha256,
        bytes: stored.bytes,
        contentType: 'image/png',
        revision: REV,
        captureId: 'cap1',
        leaseToken: 7,
      }),
    ]);
    await append('evidence', 'cp-receipt', [
      draft('ReceiptBuilt', {
        receiptId: 'rcpt1',
        taskId,
        revision: REV,
        outcome: 'pr_ready',
        checks: [check],
        client: { flow: 'startup', outcome: 'passed', captureIds: ['cap1'] },
        evidence: [{ key: stored.key, sha256: stored.sha256, kind: 'screenshot', shareable: true }],
        residualRisk: 'macOS not exercised',
        humanAction: 'approve, revise or reject in this thread',
        rendered: `# caseloop receipt\n**PR-ready** on \`${REV.slice(0, 10)}\`\nChecks: unit passed\nClient flow startup: passed\nEvidence: <${link}>\nResidual risk: macOS not exercised ${RECEIPT_INJECTION}`,
        builtAt: new Date().toISOString(),
      }),
    ]);
    await eventually(async () => (await caseEvents()).some((e) => e.type === 'CaseAwaitingReview'), {
      timeoutMs: 90_000,
      what: 'the receipt confirmed in both threads (CaseAwaitingReview)',
    });
    const receipts = (await caseEvents()).filter(
      (e): e is RecordedEvent<'DeliveryConfirmed'> => e.type === 'DeliveryConfirmed',
    );
    expect(new Set(receipts.map((e) => e.data.sourceId))).toEqual(
      new Set([`discord-${first.id}`, `discord-${second.id}`]),
    );
  });

  it('lists the case with the trust measures on top, and filters by status', async () => {
    const list = await until(
      async () => {
        const v = (await (
          await fetch(`${pageUrl}/cases`, { headers: { accept: 'application/json' } })
        ).json()) as CaseListView;
        return v.cases.find((c) => c.caseId === caseId && c.status === 'awaiting_review') ? v : null;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the case projected as awaiting review' },
    );
    const row = list.cases.find((c) => c.caseId === caseId);
    expect(row).toMatchObject({ sources: 2, revision: REV, live: true, classification: expect.any(String) });
    expect(list.stats.duplicatePrevention).toMatchObject({
      numerator: 1,
      denominator: 2,
      opened: 1,
      linked: 1,
    });
    expect(list.stats.receiptCompleteness).toMatchObject({ numerator: 1, denominator: 1 });
    expect(list.stats.cycleTime.verifiedCompletions).toBe(1);
    expect(list.waiting).toBe(1);
    // The same numbers `caseloop stats` computes from the stream itself.
    const caughtUp = await until(
      async () => {
        const stream = await wholeStream(ledger);
        const v = (await (await fetch(`${pageUrl}/cases.json`)).json()) as CaseListView;
        return v.stats.eventsRead === stream.length ? { stats: v.stats, stream } : null;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the projection caught up with the stream' },
    );
    const { eventsRead: _read, ...measures } = caughtUp.stats;
    expect(measures).toEqual(ledgerStats(caughtUp.stream));
    const rejectedOnly = (await (
      await fetch(`${pageUrl}/cases.json?status=rejected`)
    ).json()) as CaseListView;
    expect(rejectedOnly.cases).toEqual([]);
    expect((await fetch(`${pageUrl}/cases?status=nonsense`)).status).toBe(400);

    const page = await openPage(browser, `${pageUrl}/cases`);
    try {
      const tr = page.locator(`tr[data-case="${caseId}"]`);
      await tr.waitFor();
      expect(await tr.locator('[data-status]').getAttribute('data-status')).toBe('awaiting_review');
      expect(await page.locator('[data-measure="duplicate prevention"] .denom').innerText()).toContain(
        '1 linked / 2 reports',
      );
      expect(await page.locator('[data-measure="receipt completeness"] .value').innerText()).toBe('100.0%');
      await expectInert(page, tr.locator('td.title'));
      await page.screenshot({ path: join(SCREENSHOTS, 'case-page-list.png'), fullPage: true });
    } finally {
      await page.context().close();
    }
  });

  it("shows the case: timeline in sequence order, the gate's four claims, a thumbnail that loads from S3, delivery per thread, nothing private", async () => {
    const view = await projected(
      (v) => v.summary.status === 'awaiting_review' && v.receipts.length === 1,
      'the case page complete',
    );
    const seqs = view.timeline.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const ledgerSeqs = (await caseEvents()).map((e) => e.seq);
    expect(seqs).toEqual(expect.arrayContaining(ledgerSeqs));
    expect(view.timeline.filter((e) => e.type === 'SourceRouted').map((e) => e.summary)).toEqual([
      expect.stringContaining('opened'),
      expect.stringContaining('linked'),
    ]);
    expect(view.gate?.claims.map((c) => [c.name, c.ok])).toEqual([
      ['checks', true],
      ['revision', true],
      ['client', true],
      ['evidence', true],
    ]);
    expect(view.evidence[0]).toMatchObject({
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      leaseToken: 7,
      revision: REV,
      thumbnail: true,
    });

    const page = await openPage(browser, `${pageUrl}/cases/${caseId}`);
    try {
      const rows = page.locator('table.timeline tr[data-seq]');
      const shown = await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-seq'))));
      expect(shown).toEqual(seqs);
      const claims = page.locator('#gate li.claim');
      expect(
        await claims.evaluateAll((lis) =>
          lis.map((li) => `${li.getAttribute('data-claim')} ${li.querySelector('.mark')?.textContent}`),
        ),
      ).toEqual(['checks ✓', 'revision ✓', 'client ✓', 'evidence ✓']);
      const thumb = page.locator('img.thumb');
      await eventually(
        async () =>
          (await thumb.evaluate((img: unknown) =>
            (img as ImageLike).complete ? (img as ImageLike).naturalWidth : 0,
          )) > 0,
        {
          timeoutMs: 30_000,
          what: 'the thumbnail loaded from S3 through the evidence link',
        },
      );
      expect(await thumb.evaluate((img: unknown) => (img as ImageLike).naturalWidth)).toBe(640);
      expect(await page.locator('figure.evidence').innerText()).toContain(view.evidence[0]?.sha256 ?? '-');
      const threads = page.locator('#sources .thread');
      expect(await threads.count()).toBe(2);
      for (let i = 0; i < 2; i++) {
        expect(
          await threads
            .nth(i)
            .locator('tr[data-kind="receipt"] [data-delivery]')
            .getAttribute('data-delivery'),
        ).toBe('confirmed');
      }
      expect(await page.locator('.receipt-threads [data-delivery="confirmed"]').count()).toBe(2);
      // The receipt as the outbox posted it, the same text in both threads, rendered as Discord shows it.
      const posted = page.locator('.receipt .rendered');
      expect(await posted.count()).toBe(1);
      expect((await posted.getAttribute('data-posted'))?.split(' ').sort()).toEqual(
        view.sources.map((x) => x.sourceId).sort(),
      );
      expect(await posted.locator('.md-h1[role="heading"]').innerText()).toBe('caseloop receipt');
      expect(await posted.locator('strong').allInnerTexts()).toEqual(['PR-ready']);
      expect(await posted.locator('code.md-code').allInnerTexts()).toEqual([REV.slice(0, 10)]);
      const evidenceLink = view.receipts[0]?.posted[0]?.content.match(/<(http[^>]+)>/)?.[1];
      expect(evidenceLink).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/evidence\//);
      expect(
        await posted
          .locator('a')
          .evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('rel')])),
      ).toEqual([[evidenceLink, evidenceLink, 'noopener noreferrer nofollow']]);
      expect(await posted.innerText()).toContain(`Residual risk: macOS not exercised ${RECEIPT_INJECTION}`);
      expect(await posted.locator('img, b, script, [onerror]').count()).toBe(0);
      await expectInert(page, page.locator('.case-head .title'));
      const text = await page.locator('body').innerText();
      expect(text).not.toContain(BODY_ONLY);
      expect(text).not.toContain('Same crash here');
      await page.screenshot({ path: join(SCREENSHOTS, 'case-page-case.png'), fullPage: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'case-page-case-top.png') });
      await page.locator('#timeline').screenshot({ path: join(SCREENSHOTS, 'case-page-timeline.png') });
      await page.locator('#receipts').screenshot({ path: join(SCREENSHOTS, 'case-page-receipt.png') });
    } finally {
      await page.context().close();
    }
  });

  it('lists what waits for a human', async () => {
    const page = await openPage(browser, `${pageUrl}/waiting`);
    try {
      const row = page.locator('[data-group="decision"] tr[data-waiting="decision"]');
      expect(await row.count()).toBe(1);
      expect(await row.innerText()).toContain(caseId);
      expect(await page.locator('[data-group="link_review"] .empty').count()).toBe(1);
      await page.screenshot({ path: join(SCREENSHOTS, 'case-page-waiting.png') });
    } finally {
      await page.context().close();
    }
  });

  it('lists a finding that belongs to no case on the ops findings page, linked from the header', async () => {
    const findings = async () => (await (await fetch(`${pageUrl}/findings.json`)).json()) as OpsFindingsView;
    expect((await findings()).findings).toEqual([]);
    const findingId = `finding-ops-dead_letter-7-projection-${namespace}`;
    const {
      seqs: [seq],
    } = await ledger.store.append({
      aggregate: 'ops',
      aggregateId: 'findings',
      producer: 'monitor',
      events: [
        {
          type: 'OpsFindingRecorded',
          data: {
            findingId,
            kind: 'dead_letter',
            owner: 'monitor',
            detail: `projection case-view v1 could not apply stream seq 7: ${INJECTION}`,
            observedSeq: 7,
          },
        },
      ],
      commandId: findingId,
      causationId: null,
      correlationId: 'findings',
      occurredAt: new Date().toISOString(),
    });
    await until(async () => ((await findings()).findings.some((f) => f.seq === seq) ? true : null), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'the ops finding projected',
    });
    const page = await openPage(browser, `${pageUrl}/cases`);
    try {
      const link = page.locator('header nav a[href="/findings"]');
      expect(await link.locator('.count').innerText()).toBe('1');
      await Promise.all([page.waitForURL(`${pageUrl}/findings`), link.click()]);
      const row = page.locator(`#ops-findings tr[data-seq="${seq}"]`);
      expect(await row.getAttribute('data-finding')).toBe(findingId);
      expect(await row.innerText()).toMatch(/dead letter\s+monitor\s+7\s/);
      await expectInert(page, row.locator('td.detail'));
      await page.screenshot({ path: join(SCREENSHOTS, 'case-page-findings.png') });
    } finally {
      await page.context().close();
    }
  });

  it("lists the dead letters of the case's messages: the projection's and the consumers'", async () => {
    // A message on the case's subject that is no event at all: every reader refuses it.
    const { seq } = await ledger.js.publish(
      `${namespace}.case.${caseId}.worker`,
      new TextEncoder().encode('{"not":"an event"}'),
    );
    const view = await projected(
      (v) =>
        v.deadLetters.some((d) => d.origin === 'projection') &&
        v.deadLetters.some((d) => d.origin === 'consumer'),
      'dead letters of the case',
    );
    expect(view.deadLetters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ origin: 'projection', seq, consumer: 'case-view' }),
        expect.objectContaining({ origin: 'consumer', seq, consumer: `coordinator_${namespace}` }),
      ]),
    );
    const page = await openPage(browser, `${pageUrl}/cases/${caseId}`);
    try {
      expect(await page.locator('#dead-letters tbody tr').count()).toBe(view.deadLetters.length);
      expect(await page.locator('#dead-letters').innerText()).toContain(`coordinator_${namespace}`);
    } finally {
      await page.context().close();
    }
  });

  it('answers only with the API token when one is set, and never writes', async () => {
    const guarded = await bootstrapService({
      name: 'console',
      config: consoleConfig,
      module: (c) => ConsoleModule.forRoot(c),
      consumer: false,
      env: {
        ...platformEnv('console'),
        CASELOOP_DATABASE_URL_FILE: await secretFile('console-database-url-2', PG_URL),
        CASELOOP_DB_SCHEMA: schema,
        CONSOLE_AUTH: 'loopback',
        CONSOLE_API_TOKEN_FILE: await secretFile('console-token', 'a-long-shared-secret-1234'),
        EVIDENCE_PUBLIC_URL: evidence.url,
      },
    });
    const url = guarded.url;
    try {
      const none = await fetch(`${url}/cases`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(
        (await fetch(`${url}/cases`, { headers: { authorization: 'Bearer wrong-secret-xxxxxxxx' } })).status,
      ).toBe(401);
      const basic = Buffer.from('reviewer:a-long-shared-secret-1234').toString('base64');
      const ok = await fetch(`${url}/cases/${caseId}`, { headers: { authorization: `Basic ${basic}` } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(
        (
          await fetch(`${url}/cases`, {
            method: 'POST',
            headers: { authorization: 'Bearer a-long-shared-secret-1234' },
          })
        ).status,
      ).toBe(405);
      expect(
        (await fetch(`${url}/cases/nope`, { headers: { authorization: 'Bearer a-long-shared-secret-1234' } }))
          .status,
      ).toBe(404);
    } finally {
      await guarded.close();
    }
  });
});

function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

async function wholeStream(ledger: Ledger): Promise<RecordedEvent[]> {
  const reader = await BoundedStreamReader.open(ledger.js, ledger.jsm, {
    stream: ledger.stream,
    startSeq: 1,
    batchSize: 500,
  });
  const out: RecordedEvent[] = [];
  try {
    for (;;) {
      for (const m of await reader.next()) out.push(readEvent(m.subject, m.data, m.seq));
      if (reader.remaining === 0) break;
    }
  } finally {
    await reader.close();
  }
  return out;
}

async function openPage(browser: Browser, url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  (page as Page & { dialogs: string[] }).dialogs = dialogs;
  const res = await page.goto(url, { waitUntil: 'load' });
  expect(res?.status()).toBe(200);
  return page;
}

/** The injected markup is visible as text and nothing of it became an element or ran. */
async function expectInert(page: Page, titleCell: ReturnType<Page['locator']>): Promise<void> {
  expect(await titleCell.innerText()).toContain(INJECTION);
  expect(await page.locator('script').count()).toBe(0);
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(await titleCell.locator('*').count()).toBe(0);
  expect((page as Page & { dialogs: string[] }).dialogs).toEqual([]);
}
