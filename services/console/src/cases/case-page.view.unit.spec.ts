import { CaseView, foldCase, ledgerStats } from '@caseloop/case-model';
import { EventData, EventType, eventDefinition, RecordedEvent, visibleChars } from '@caseloop/contracts';
import { ConfigError } from '@caseloop/platform';
import { consoleConfigSchema, consoleSettings } from '../console.config';
import { projectionDeadLetterFinding } from '../../../monitor/src/findings/findings.rules';
import { casePage, casesPage, errorPage, opsFindingsPage, waitingPage } from '../views/pages';
import {
  caseDetail,
  caseList,
  CaseRow,
  describeEvent,
  OPS_FINDINGS_SHOWN,
  opsFindingList,
  parseStatusFilter,
  waitingOn,
} from './case-page.view';
import { escapeHtml, safeUrl, TEMPLATES } from '../views/engine';

const CASE = 'C01JPAGE00000000000000000000';
const GUILD = '100000000000000001';
const CHANNEL = '200000000000000002';
const REV = 'a'.repeat(40);
const HEAD = '1'.repeat(40);
const SHA_OK = 'c'.repeat(64);
const SHA_HELD = 'd'.repeat(64);
const SHA_APPROVED = 'e'.repeat(64);
const SECRET = 'sk_live_51HxYzAbCdEfGhIjKlMnOpQrStUvWx0123456789';
const NOW = '2026-11-29T13:00:00.000Z';
const BASE = 'https://evidence.example';

let seq = 0;
function rec<T extends EventType>(type: T, data: EventData<T>, aggregateId = CASE): RecordedEvent {
  const def = eventDefinition(type);
  if (!def) throw new Error(type);
  seq += 1;
  return {
    type,
    data: def.schema.parse(data),
    seq,
    subject: `caseloop.${def.aggregate}.${aggregateId}.${def.producer}`,
    eventId: `e${seq}:0`,
    version: 1,
    aggregate: def.aggregate,
    aggregateId,
    producer: def.producer,
    commandId: `e${seq}`,
    causationId: null,
    correlationId: 'corr',
    occurredAt: new Date(Date.parse('2026-11-29T12:00:00.000Z') + seq * 60_000).toISOString(),
  } as RecordedEvent;
}

const place = (n: number) => ({
  guildId: GUILD,
  channelId: CHANNEL,
  threadId: null,
  messageId: `30000000000000000${n}`,
});
const src = (n: number) => `discord-30000000000000000${n}`;
const INJECTION = '<img src=x onerror=alert(1)><script>alert(1)</script>';

function history(): RecordedEvent[] {
  seq = 0;
  return [
    rec(
      'SourceReceived',
      {
        sourceId: src(1),
        place: place(1),
        authorId: '41',
        authorIsReviewer: false,
        content: `PRIVATE-BODY customer ACME ${SECRET}`,
        rawChars: visibleChars(`PRIVATE-BODY customer ACME ${SECRET}`),
        sealed: null,
        attachments: [],
        mentionedBot: false,
        createdAt: '2026-11-29T12:00:00.000Z',
        via: 'gateway',
      },
      src(1),
    ),
    rec('CaseOpened', {
      sourceId: src(1),
      place: place(1),
      reporterId: '41',
      title: `Cart total wrong ${INJECTION}`,
      confidence: 0,
      reasons: ['no open case shares a term'],
    }),
    rec('SourceLinked', {
      sourceId: src(2),
      place: place(2),
      reporterId: '42',
      via: 'semantic_match',
      confidence: 0.91,
      reasons: [`shared: cart, total, ${SECRET}`],
    }),
    rec('TaskAssigned', {
      taskId: 'T1',
      repository: 'shop',
      targetBranch: 'main',
      targetRevision: null,
      brief: 'Fix the total.',
    }),
    rec('CaptureTaken', {
      taskId: 'T1',
      revision: REV,
      captureId: 'cap1',
      resource: 'browser:default',
      leaseToken: 7,
      step: 'cart page',
      page: { url: 'http://127.0.0.1/cart', title: 'Cart' },
      sha256: SHA_OK,
      takenAt: '2026-11-29T12:05:00.000Z',
    }),
    rec('ArtifactReviewed', {
      artifactId: 'a1',
      kind: 'screenshot',
      sha256: SHA_OK,
      decision: 'cleared',
      redactions: [],
      basis: 'fixture data',
    }),
    rec('ArtifactStored', {
      artifactId: 'a1',
      kind: 'screenshot',
      key: `cases/${CASE}/${REV}/${SHA_OK}`,
      sha256: SHA_OK,
      bytes: 10,
      contentType: 'image/png',
      revision: REV,
      captureId: 'cap1',
      leaseToken: 7,
    }),
    rec('ArtifactReviewed', {
      artifactId: 'a2',
      kind: 'screenshot',
      sha256: SHA_HELD,
      decision: 'needs_human',
      redactions: [],
      basis: 'not fixture data',
    }),
    rec('ArtifactStored', {
      artifactId: 'a2',
      kind: 'screenshot',
      key: `cases/${CASE}/${REV}/${SHA_HELD}`,
      sha256: SHA_HELD,
      bytes: 10,
      contentType: 'image/png',
      revision: REV,
      captureId: null,
      leaseToken: null,
    }),
    rec('ArtifactReviewed', {
      artifactId: 'a3',
      kind: 'screenshot',
      sha256: SHA_APPROVED,
      decision: 'needs_human',
      redactions: [],
      basis: 'not fixture data',
    }),
    rec('ArtifactStored', {
      artifactId: 'a3',
      kind: 'screenshot',
      key: `cases/${CASE}/${REV}/${SHA_APPROVED}`,
      sha256: SHA_APPROVED,
      bytes: 10,
      contentType: 'image/png',
      revision: REV,
      captureId: null,
      leaseToken: null,
    }),
    rec('PrivacyApproved', { reviewerId: '99', messageId: '98', artifactSha256: SHA_APPROVED }),
    rec('GateEvaluated', {
      taskId: 'T1',
      revision: REV,
      targetHead: HEAD,
      claims: {
        checks: { ok: true, detail: 'all passed' },
        revision: { ok: true, detail: 'on head' },
        client: { ok: true, detail: 'passed' },
        evidence: { ok: false, detail: 'receipt not confirmed everywhere' },
      },
      complete: false,
      outcome: null,
    }),
    rec('ReceiptBuilt', {
      receiptId: 'r1',
      taskId: 'T1',
      revision: REV,
      outcome: 'pr_ready',
      checks: [],
      client: { flow: 'cart', outcome: 'passed', captureIds: ['cap1'] },
      evidence: [],
      residualRisk: 'none',
      humanAction: 'decide',
      rendered: `PR-ready. token ${SECRET}`,
      builtAt: '2026-11-29T12:20:00.000Z',
    }),
    rec('DeliveryRequested', {
      deliveryId: 'd1',
      sourceId: src(1),
      kind: 'receipt',
      place: place(1),
      content: 'PR-ready.',
      receiptId: 'r1',
    }),
    rec('DeliveryRequested', {
      deliveryId: 'd2',
      sourceId: src(2),
      kind: 'receipt',
      place: place(2),
      content: 'PR-ready.',
      receiptId: 'r1',
    }),
    rec('DeliveryIntended', {
      deliveryId: 'd1',
      chunkIndex: 0,
      sourceId: src(1),
      chunkCount: 1,
      nonce: 'n1',
      channelId: CHANNEL,
      threadId: '51',
      contentSha256: 'f'.repeat(64),
      length: 9,
      intendedAt: NOW,
    }),
    rec('DeliveryConfirmed', {
      deliveryId: 'd1',
      chunkIndex: 0,
      sourceId: src(1),
      discordMessageId: '61',
      channelId: CHANNEL,
      threadId: '51',
      reconciled: false,
    }),
    rec('FindingRecorded', {
      findingId: 'f1',
      kind: 'delivery_stuck',
      owner: 'intake',
      detail: `receipt not confirmed in ${src(2)}; token ${SECRET}`,
      observedSeq: 3,
    }),
    rec('DeliveryRefused', {
      deliveryId: 'd2',
      chunkIndex: 0,
      sourceId: src(2),
      reason: 'channel_gone',
      detail: 'unknown channel',
    }),
  ];
}

function detail(events = history()) {
  const state = foldCase(events.filter((e) => e.aggregate === 'case')) as CaseView;
  return caseDetail({
    state,
    events: [...events].reverse(),
    candidates: [],
    deadLetters: [],
    evidenceBaseUrl: BASE,
    now: NOW,
  });
}

describe('the case view', () => {
  it('orders the timeline by ledger sequence whatever order the events came in', () => {
    const seqs = detail().timeline.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs).toHaveLength(history().length);
  });

  it("never carries a source's own words, and redacts secrets in every displayed text", () => {
    const json = JSON.stringify(detail());
    expect(json).not.toContain('PRIVATE-BODY');
    expect(json).not.toContain(SECRET);
    expect(json).toContain('[redacted:');
  });

  it('gives each source thread its delivery state', () => {
    const v = detail();
    expect(
      v.sources.map((s) => [s.sourceId, s.deliveries.map((d) => [d.kind, d.state, d.discordMessageIds])]),
    ).toEqual([
      [src(1), [['receipt', 'confirmed', ['61']]]],
      [src(2), [['receipt', 'refused', []]]],
    ]);
    expect(v.receipts[0]?.posted).toEqual([{ sourceIds: [src(1), src(2)], content: 'PR-ready.' }]);
    expect(v.receipts[0]?.threads).toEqual([
      { sourceId: src(1), state: 'confirmed' },
      { sourceId: src(2), state: 'refused' },
    ]);
  });

  it('links evidence only when its review cleared it or a reviewer approved it, with its capture tags', () => {
    const v = detail();
    expect(v.evidence.map((e) => [e.artifactId, e.shareable, e.url])).toEqual([
      ['a1', true, `${BASE}/evidence/cases/${CASE}/${REV}/${SHA_OK}`],
      ['a2', false, null],
      ['a3', true, `${BASE}/evidence/cases/${CASE}/${REV}/${SHA_APPROVED}`],
    ]);
    expect(v.evidence[0]).toMatchObject({
      leaseToken: 7,
      captureId: 'cap1',
      step: 'cart page',
      revision: REV,
      thumbnail: true,
    });
    expect(v.waiting.map((w) => [w.kind, w.ref])).toEqual([['privacy_approval', SHA_HELD]]);
  });

  it('shows the four gate claims of the latest verdict', () => {
    expect(detail().gate?.claims.map((c) => `${c.name}:${c.ok}`)).toEqual([
      'checks:true',
      'revision:true',
      'client:true',
      'evidence:false',
    ]);
  });

  it('describes a report by where it came from, never by what it said', () => {
    const [received] = history();
    const d = describeEvent(received as RecordedEvent);
    expect(JSON.stringify(d)).not.toContain('PRIVATE-BODY');
    expect(d.facts).toContainEqual({
      label: 'length',
      value: `${visibleChars(`PRIVATE-BODY customer ACME ${SECRET}`)} visible characters`,
    });
    expect(d.facts).toContainEqual({ label: 'raw text', value: 'not kept' });
  });
});

describe('monitor output on the case page', () => {
  it('shows findings and the improvement candidates naming the case, redacted', () => {
    const events = history();
    const state = foldCase(events.filter((e) => e.aggregate === 'case')) as CaseView;
    const candidate = rec(
      'ImprovementCandidateRecorded',
      {
        candidateId: 'ic1',
        kind: 'delivery_stuck',
        caseIds: [CASE, 'C01JOTHER0000000000000000000'],
        windowStart: '2026-11-28T13:00:00.000Z',
        windowEnd: NOW,
        summary: 'deliveries stuck in 2 cases',
      },
      'improvements',
    ) as RecordedEvent<'ImprovementCandidateRecorded'>;
    const v = caseDetail({
      state,
      events,
      candidates: [candidate],
      deadLetters: [],
      evidenceBaseUrl: null,
      now: NOW,
    });
    expect(v.findings).toEqual([
      expect.objectContaining({
        kind: 'delivery_stuck',
        owner: 'intake',
        detail: expect.stringContaining('[redacted:'),
      }),
    ]);
    expect(v.findings[0]?.detail).not.toContain(SECRET);
    expect(v.candidates).toEqual([
      expect.objectContaining({ candidateId: 'ic1', caseIds: [CASE, 'C01JOTHER0000000000000000000'] }),
    ]);
    expect(v.evidence.every((e) => e.url === null && !e.thumbnail)).toBe(true);
    const page = casePage(v).value;
    expect(page).toContain('deliveries stuck in 2 cases');
    expect(page).toContain('id="monitor"');
  });
});

describe('ops findings: what belongs to no case', () => {
  /** The finding the monitor records for a dead letter on a source subject, as the heartbeat builds it. */
  const deadLetterOnSource = (letterSeq: number) => {
    const { findingId, finding } = projectionDeadLetterFinding({
      projection: 'case-view',
      version: 3,
      seq: letterSeq,
      subject: `caseloop.source.${src(1)}.intake`,
      code: 'unknown_event_version',
      error: `seq ${letterSeq}: SourceReceived v2 is newer than this reader (v1); upgrade the reader`,
    });
    const { kind, owner, detail, observedSeq } = finding;
    return rec(
      'OpsFindingRecorded',
      { findingId, kind, owner, detail, observedSeq },
      'findings',
    ) as RecordedEvent<'OpsFindingRecorded'>;
  };
  const opsFinding = (findingId: string, detail: string) =>
    rec(
      'OpsFindingRecorded',
      { findingId, kind: 'dead_letter', owner: 'monitor', detail, observedSeq: 4 },
      'findings',
    ) as RecordedEvent<'OpsFindingRecorded'>;

  it('lists them newest first, at most OPS_FINDINGS_SHOWN, with the stream sequences, redacted', () => {
    seq = 0;
    const events = Array.from({ length: OPS_FINDINGS_SHOWN + 5 }, (_, i) => deadLetterOnSource(1000 + i));
    const withSecret = opsFinding('f-secret', `token in a subject: ${SECRET}`);
    const v = opsFindingList({ events: [withSecret, ...events], total: events.length + 1, now: NOW });
    expect(v.total).toBe(OPS_FINDINGS_SHOWN + 6);
    expect(v.findings).toHaveLength(OPS_FINDINGS_SHOWN);
    expect(v.findings[0]).toMatchObject({ findingId: 'f-secret', seq: withSecret.seq });
    expect(v.findings[0]?.detail).not.toContain(SECRET);
    expect(v.findings[0]?.detail).toContain('[redacted:');
    const seqs = v.findings.map((f) => f.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(v.findings[1]).toEqual({
      seq: events.at(-1)?.seq,
      findingId: 'finding-ops-dead_letter-1054-projection-case-view-v3',
      kind: 'dead_letter',
      owner: 'monitor',
      detail: expect.stringContaining('`caseloop dead-letters --redrive 1054`'),
      observedSeq: 1054,
      occurredAt: events.at(-1)?.occurredAt,
    });
  });

  it('renders time, kind, owner, both sequences and the detail, a hostile detail as text', () => {
    seq = 0;
    const letter = deadLetterOnSource(4711);
    const hostile = opsFinding('f-hostile', `reason: ${INJECTION} & "quoted"`);
    const page = opsFindingsPage(opsFindingList({ events: [letter, hostile], total: 2, now: NOW })).value;
    const rows = [...page.matchAll(/<tr data-seq="(\d+)" data-finding="([^"]+)"/g)].map((m) => [
      Number(m[1]),
      m[2],
    ]);
    expect(rows).toEqual([
      [hostile.seq, 'f-hostile'],
      [letter.seq, 'finding-ops-dead_letter-4711-projection-case-view-v3'],
    ]);
    expect(page).toContain('2026-11-29 12:01:00 UTC');
    expect(page).toContain('dead letter');
    expect(page).toContain('<code>4711</code>');
    expect(page).toContain(`(caseloop.source.${src(1)}.intake)`);
    expect(page).toContain('<span class="count warn">2</span>');
    expect(page).toContain(`reason: ${escapeHtml(INJECTION)} &amp; &quot;quoted&quot;`);
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img[^>]+src="x"/);
  });

  it('shows nothing but an empty note when there are none, and counts them in the header', () => {
    const empty = opsFindingsPage(opsFindingList({ events: [], total: 0, now: NOW })).value;
    expect(empty).toContain('No ops findings.');
    expect(empty).not.toContain('<table');
    expect(empty).toContain('href="/findings"');
    expect(empty).not.toContain('class="count');
    const list = (opsFindings: number) =>
      casesPage(
        caseList({
          rows: [],
          counts: {},
          stats: { ...ledgerStats([]), eventsRead: 0 },
          waiting: 0,
          opsFindings,
          filter: null,
          now: NOW,
        }),
        { refreshSeconds: 0 },
      ).value;
    expect(list(0)).toMatch(/<a href="\/findings" class=""\s*>Ops findings<\/a/);
    expect(list(3)).toMatch(/>Ops findings <span class="count warn">3<\/span><\/a/);
  });
});

describe('what waits for a human', () => {
  it('lists a held report until its link review is settled', () => {
    const held = [
      ...history(),
      rec('LinkReviewRequested', {
        sourceId: src(3),
        place: place(3),
        reporterId: '43',
        reviewId: 'lr1',
        confidence: 0.6,
        reasons: ['shared: cart'],
      }),
    ];
    const fold = (events: RecordedEvent[]) =>
      foldCase(events.filter((e) => e.aggregate === 'case')) as CaseView;
    const pending = waitingOn(fold(held), held).filter((w) => w.kind === 'link_review');
    expect(pending).toEqual([expect.objectContaining({ ref: 'lr1', caseId: CASE })]);
    const settled = [
      ...held,
      rec('LinkReviewSettled', { reviewerId: '99', messageId: '97', reviewId: 'lr1', verdict: 'different' }),
    ];
    expect(waitingOn(fold(settled), settled).filter((w) => w.kind === 'link_review')).toEqual([]);
  });
});

describe('the case list', () => {
  const row = (caseId: string, status: CaseRow['status'], updatedAt: string): CaseRow => ({
    caseId,
    status,
    title: caseId,
    classification: 'bug',
    taskId: null,
    revision: null,
    openedAt: '2026-11-29T10:00:00.000Z',
    updatedAt,
    lastSeq: 1,
    lastEventType: 'CaseOpened',
    eventCount: 1,
    sources: 1,
  });
  const rows = [
    row('A', 'approved', '2026-11-29T12:59:00.000Z'),
    row('B', 'in_progress', '2026-11-29T11:00:00.000Z'),
    row('C', 'awaiting_review', '2026-11-29T12:00:00.000Z'),
  ];
  const stats = { ...ledgerStats([]), eventsRead: 0 };

  it('puts live cases first, most recently moved first, and filters', () => {
    expect(
      caseList({ rows, counts: {}, stats, waiting: 0, opsFindings: 0, filter: null, now: NOW }).cases.map(
        (c) => c.caseId,
      ),
    ).toEqual(['C', 'B', 'A']);
    expect(
      caseList({ rows, counts: {}, stats, waiting: 0, opsFindings: 0, filter: 'live', now: NOW }).cases.map(
        (c) => c.caseId,
      ),
    ).toEqual(['C', 'B']);
    expect(
      caseList({
        rows,
        counts: {},
        stats,
        waiting: 0,
        opsFindings: 0,
        filter: 'approved',
        now: NOW,
      }).cases.map((c) => c.caseId),
    ).toEqual(['A']);
    expect(
      caseList({ rows, counts: {}, stats, waiting: 0, opsFindings: 0, filter: null, now: NOW }).cases[1],
    ).toMatchObject({
      ageMinutes: 180,
      lastEventAgoMinutes: 120,
    });
  });

  it('accepts only known status filters', () => {
    expect(parseStatusFilter(undefined)).toBeNull();
    expect(parseStatusFilter('live')).toBe('live');
    expect(parseStatusFilter('awaiting_review')).toBe('awaiting_review');
    expect(parseStatusFilter("x' or 1=1")).toBe('invalid');
  });
});

describe('the rendered pages', () => {
  it('escapes every interpolated text and keeps only its own markup', () => {
    expect(errorPage(400, INJECTION).value).toContain(`<p>${escapeHtml(INJECTION)}</p>`);
    expect(errorPage(400, INJECTION).value).not.toMatch(/<script/i);
    expect(escapeHtml(`"'<>&\``)).toBe('&quot;&#39;&lt;&gt;&amp;&#96;');
    expect(safeUrl('javascript:alert(1)')).toBe('#');
    expect(safeUrl('https://evidence.example/evidence/x')).toBe('https://evidence.example/evidence/x');
  });

  it('outputs raw markup only from a partial, a layout body or the markdown renderer', () => {
    const raw = Object.entries(TEMPLATES).flatMap(([name, source]) =>
      [...source.matchAll(/<%~\s*([^%]*?)\s*%>/g)].map((m) => `${name}: ${m[1]}`),
    );
    expect(raw.length).toBeGreaterThan(0);
    const allowed = /^[\w-]+: (include\('@[\w-]+'(, \{.*\})?\)|it\.body|it\.h\.markdown\([\w.]+\))$/;
    expect(raw.filter((r) => !allowed.test(r))).toEqual([]);
    // Only `<%=` (escaped), `<%~` (above) and `<%` (code) tags, nothing else.
    for (const source of Object.values(TEMPLATES))
      expect([...source.matchAll(/<%(.)/g)].map((m) => m[1]).filter((c) => !/[=~\s]/.test(c ?? ''))).toEqual(
        [],
      );
  });

  it('escapes a report title on the waiting page', () => {
    const page = waitingPage({
      kind: 'waiting',
      generatedAt: NOW,
      items: [
        {
          kind: 'decision',
          caseId: CASE,
          caseTitle: `t ${INJECTION}`,
          detail: `d ${INJECTION}`,
          since: NOW,
          ref: 'r1',
        },
      ],
    }).value;
    expect(page).toContain(`<div class="muted">t ${escapeHtml(INJECTION)}</div>`);
    expect(page).toContain(`<td>d ${escapeHtml(INJECTION)}</td>`);
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img[^>]+src="x"/);
  });

  it('renders a report title with markup as text, and no script anywhere', () => {
    const page = casePage(detail()).value;
    expect(page).toContain('Cart total wrong &lt;img src=x onerror=alert(1)&gt;&lt;script&gt;');
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img[^>]+src="x"/);
    const list = casesPage(
      caseList({
        rows: [
          {
            caseId: CASE,
            status: 'in_progress',
            title: `t ${INJECTION}`,
            classification: null,
            taskId: null,
            revision: null,
            openedAt: NOW,
            updatedAt: NOW,
            lastSeq: 1,
            lastEventType: 'CaseOpened',
            eventCount: 1,
            sources: 1,
          },
        ],
        counts: { in_progress: 1 },
        stats: { ...ledgerStats([]), eventsRead: 0 },
        waiting: 0,
        opsFindings: 0,
        filter: null,
        now: NOW,
      }),
      { refreshSeconds: 30 },
    ).value;
    expect(list).not.toMatch(/<script/i);
    expect(list).toContain('&lt;script&gt;');
  });
});

describe('a receipt on the case page', () => {
  const RECEIPT = [
    '# Receipt r1',
    '**Outcome:** PR ready on `abc1234567`',
    '- unit `passed` · [log](<https://evidence.example/evidence/log>)',
    '**Evidence:** <https://evidence.example/evidence/x> [bad](javascript:alert(1))',
    `Residual risk: ${INJECTION} "quoted" & more`,
  ].join('\n');
  /** The history with the receipt's text replaced, as posted to both threads or only as built. */
  const withReceipt = (posted: boolean): RecordedEvent[] =>
    history()
      .filter((e) => posted || e.type !== 'DeliveryRequested')
      .map((e) =>
        e.type === 'DeliveryRequested'
          ? ({ ...e, data: { ...e.data, content: RECEIPT } } as RecordedEvent)
          : e.type === 'ReceiptBuilt'
            ? ({ ...e, data: { ...e.data, rendered: RECEIPT } } as RecordedEvent)
            : e,
      );
  const receiptHtml = (posted: boolean): string => {
    const page = casePage(detail(withReceipt(posted))).value;
    const m = /<div class="rendered"[^>]*>([\s\S]*?)<\/div>\s*<div class="receipt-threads">/.exec(page);
    if (!m) throw new Error('no rendered receipt on the page');
    return m[1] as string;
  };

  it.each([
    ['as posted', true],
    ['as built, before it is routed', false],
  ])('renders its markdown %s: headings, bold, code and http(s) links', (_, posted) => {
    const body = receiptHtml(posted);
    expect(body).toContain('<div class="md-h1" role="heading" aria-level="3">Receipt r1</div>');
    expect(body).toContain('<strong>Outcome:</strong> PR ready on <code class="md-code">abc1234567</code>');
    expect(body).toContain('<ul class="md-list"><li>unit <code class="md-code">passed</code>');
    expect(body).toContain(
      '<a class="md-link" href="https://evidence.example/evidence/log" title="https://evidence.example/evidence/log" target="_blank" rel="noopener noreferrer nofollow">log</a>',
    );
    expect(body).toContain('>https://evidence.example/evidence/x</a>');
    // Only http(s) becomes a link: the javascript: one stays text.
    expect(body.match(/<a /g)).toHaveLength(2);
    expect(body).toContain('[bad](javascript:alert(1))');
    expect(body).not.toMatch(/href="(?!https:)/);
  });

  it('escapes HTML in a receipt, and the page still has no script', () => {
    const page = casePage(detail(withReceipt(true))).value;
    const body = receiptHtml(true);
    expect(body).toContain(
      'Residual risk: &lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(1)&lt;/script&gt; &quot;quoted&quot; &amp; more',
    );
    expect(body).not.toMatch(/<(img|script)\b/i);
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<pre class="rendered"/);
  });
});

describe('the console settings', () => {
  const parse = (env: Record<string, string>) => consoleConfigSchema.parse(env);
  const signIn = {
    CONSOLE_PUBLIC_URL: 'https://cases.example.com/',
    CONSOLE_DISCORD_CLIENT_ID: '123456789012345678',
    CONSOLE_BINDING_FILE: '/etc/caseloop/binding.yaml',
    CONSOLE_SESSION_SECRET: 's'.repeat(32),
  };

  it('signs in with Discord by default, and goes without sign-in only when told, on loopback', () => {
    expect(() => consoleSettings(parse({}))).toThrow(ConfigError);
    expect(() => consoleSettings(parse({}))).toThrow(
      /CONSOLE_PUBLIC_URL: required when CONSOLE_AUTH=discord/,
    );
    const s = consoleSettings(parse(signIn));
    expect(s.signIn).toMatchObject({
      redirectUri: 'https://cases.example.com/auth/callback',
      secureCookies: true,
      clientSecret: null,
    });
    expect(consoleSettings(parse({ CONSOLE_AUTH: 'loopback', HTTP_HOST: '127.0.0.1' })).signIn).toBeNull();
  });

  it('refuses loopback without sign-in on a wider listener, naming the key only', () => {
    const wide = parse({ CONSOLE_AUTH: 'loopback', HTTP_HOST: '0.0.0.0' });
    expect(() => consoleSettings(wide)).toThrow(ConfigError);
    expect(() => consoleSettings(wide)).toThrow(
      /CONSOLE_AUTH: loopback \(no sign-in\) needs a loopback HTTP_HOST/,
    );
  });
});

describe('checks progress on the case page', () => {
  const result = (name: string, outcome: 'passed' | 'failed') => ({
    name,
    kind: 'focused_test' as const,
    outcome,
    revision: REV,
    durationMs: 4200,
    exitCode: outcome === 'passed' ? 0 : 1,
    outputSha256: SHA_OK,
    outputBytes: 414_000,
  });
  const started = (index: number, name: string) =>
    rec('CheckStarted', {
      taskId: 'T1',
      revision: REV,
      name,
      kind: 'focused_test',
      index,
      total: 3,
      attemptId: 'T1-a1',
    });
  const finished = (index: number, name: string, outcome: 'passed' | 'failed', tail: string[]) =>
    rec('CheckFinished', {
      taskId: 'T1',
      index,
      total: 3,
      attemptId: 'T1-a1',
      result: result(name, outcome),
      excerpt: { head: ['TAP version 13'], tail, omittedLines: 9000 },
      logKey: `checks/${CASE}/${REV}/${SHA_OK}.log`,
    });

  it('shows each check of the latest run as it runs, and reloads the page until the run is over', () => {
    const running = [
      started(0, 'lint'),
      finished(0, 'lint', 'passed', ['0 problems']),
      started(1, 'unit'),
      finished(1, 'unit', 'failed', ['not ok 17 total', `# token ${SECRET}`, '# fail 1']),
      started(2, 'e2e'),
    ];
    const view = detail([...history(), ...running]);
    expect(view.checks).toMatchObject({ revision: REV, attemptId: 'T1-a1', total: 3, running: true });
    expect(view.checks?.lines.map((l) => [l.name, l.status])).toEqual([
      ['lint', 'passed'],
      ['unit', 'failed'],
      ['e2e', 'running'],
    ]);
    expect(JSON.stringify(view.checks)).not.toContain(SECRET);
    const page = casePage(view, { refreshSeconds: 5 }).toString();
    expect(page).toContain('<meta http-equiv="refresh" content="5" />');
    expect(page).toContain('2/3 done · running, this page reloads');
    expect(page).toContain('data-check="e2e" data-status="running"');
    expect(page).toContain('not ok 17 total');

    const over = detail([...history(), ...running, finished(2, 'e2e', 'passed', ['ok'])]);
    expect(over.checks?.running).toBe(false);
    expect(casePage(over, { refreshSeconds: 5 }).toString()).not.toContain('http-equiv="refresh"');
  });

  it('follows the newest run: a later attempt starts its own list', () => {
    const view = detail([
      ...history(),
      started(0, 'lint'),
      finished(0, 'lint', 'failed', ['1 problem']),
      rec('CheckStarted', {
        taskId: 'T1',
        revision: HEAD,
        name: 'lint',
        kind: 'lint',
        index: 0,
        total: 1,
        attemptId: 'T1-a2',
      }),
    ]);
    expect(view.checks).toMatchObject({ revision: HEAD, attemptId: 'T1-a2', running: true });
    expect(view.checks?.lines).toHaveLength(1);
  });
});
