import { foldCase } from '@caseloop/case-model';
import { RecordedEvent } from '@caseloop/contracts';
import { taskIdForCase } from '../case.ids';
import {
  CASE_ID,
  check,
  CLEAR_BUG,
  context,
  decide,
  decideGiven,
  HEAD_1,
  HEAD_2,
  identity,
  NOW,
  ofType,
  record,
  recorded,
  REV_A,
  REV_B,
  SHA,
  source,
  types,
} from './case.fixtures';

const S1 = source(1, CLEAR_BUG);
const S2 = source(
  2,
  'same crash here on win 11 after the 4.3.0 update: Cannot find module keytar, blocks me from working. screenshot attached',
);
const TASK = taskIdForCase(CASE_ID, NOW);

/** A clear bug, opened and assigned: the start of most stories below. */
function assigned(): RecordedEvent[] {
  return record(decide([], { kind: 'open_case', caseId: CASE_ID, source: S1, identity }, context([S1])));
}

function withLinked(history: RecordedEvent[]): RecordedEvent[] {
  return [
    ...history,
    ...record(
      decide(
        history,
        { kind: 'link_source', source: S2, via: 'semantic_match', identity },
        context([S1, S2]),
      ),
    ),
  ];
}

const worker = (h: RecordedEvent[], head = HEAD_1): RecordedEvent[] => [
  ...h,
  recorded('ChecksCompleted', {
    taskId: TASK,
    revision: REV_A,
    targetHead: head,
    passed: true,
    results: [
      check('lint', REV_A),
      check('typecheck', REV_A),
      check('focused_test', REV_A),
      check('build', REV_A),
    ],
  }),
  recorded('BranchPushed', {
    taskId: TASK,
    branch: `caseloop/${CASE_ID}`,
    revision: REV_A,
    baseRevision: head,
    created: true,
    draftPullRequestUrl: null,
  }),
];

const evidence = (h: RecordedEvent[], client: 'passed' | 'blocked' = 'passed'): RecordedEvent[] => [
  ...h,
  recorded('ClientValidationCompleted', {
    taskId: TASK,
    revision: REV_A,
    outcome: client,
    reason: client === 'blocked' ? 'the shared browser profile is busy' : null,
    captureIds: ['cap1'],
  }),
  recorded('ArtifactReviewed', {
    artifactId: 'art1',
    kind: 'screenshot',
    sha256: SHA,
    decision: 'cleared',
    redactions: [],
    basis: 'fixture data',
  }),
  recorded('ArtifactStored', {
    artifactId: 'art1',
    kind: 'screenshot',
    key: `cases/${CASE_ID}/art1.png`,
    sha256: SHA,
    bytes: 10,
    contentType: 'image/png',
    revision: REV_A,
    captureId: 'cap1',
    leaseToken: 1,
  }),
];

const receipt = (
  outcome: 'pr_ready' | 'implemented_client_blocked' = 'pr_ready',
  rendered = 'Receipt: PR-ready on aaaa; checks passed; client flow passed.',
) =>
  recorded('ReceiptBuilt', {
    receiptId: 'rcpt1',
    taskId: TASK,
    revision: REV_A,
    outcome,
    checks: [check('lint', REV_A)],
    client: { flow: 'startup', outcome: outcome === 'pr_ready' ? 'passed' : 'blocked', captureIds: ['cap1'] },
    evidence: [{ key: `cases/${CASE_ID}/art1.png`, sha256: SHA, kind: 'screenshot', shareable: true }],
    residualRisk: 'none known',
    humanAction: 'approve, revise or reject',
    rendered,
    builtAt: NOW,
  });

const confirm = (deliveryId: string, sourceId: string): RecordedEvent[] => [
  recorded('DeliveryIntended', {
    deliveryId,
    chunkIndex: 0,
    sourceId,
    chunkCount: 1,
    nonce: 'n1',
    channelId: '200000000000000002',
    threadId: null,
    contentSha256: SHA,
    length: 10,
    intendedAt: NOW,
  }),
  recorded('DeliveryConfirmed', {
    deliveryId,
    chunkIndex: 0,
    sourceId,
    discordMessageId: '500000000000000001',
    channelId: '200000000000000002',
    threadId: null,
    reconciled: false,
  }),
];

describe('case decider: opening', () => {
  it('opens a clear bug, triages it, scopes privacy, assigns the one task and acknowledges with the case id and next step', () => {
    const out = decide([], { kind: 'open_case', caseId: CASE_ID, source: S1, identity }, context([S1]));
    expect(types(out)).toEqual([
      'CaseOpened',
      'CaseClassified',
      'PrivacyScopeSet',
      'ReadinessConfirmed',
      'TaskAssigned',
      'DeliveryRequested',
    ]);
    expect(ofType(out, 'CaseClassified')[0]?.classification).toBe('regression');
    expect(ofType(out, 'TaskAssigned')[0]).toMatchObject({
      taskId: TASK,
      repository: 'tandem-desktop',
      targetBranch: 'main',
    });
    const ack = ofType(out, 'DeliveryRequested')[0];
    expect(ack).toMatchObject({ kind: 'ack', sourceId: S1.sourceId, deliveryId: `ack-${S1.sourceId}` });
    expect(ack?.content).toContain(CASE_ID);
    expect(ack?.content).toContain(TASK);
  });

  it('asks one clear question instead of dispatching when the report is vague', () => {
    const vague = source(3, 'the export thing is broken again');
    const out = decide([], { kind: 'open_case', caseId: CASE_ID, source: vague, identity }, context([vague]));
    expect(types(out)).toEqual([
      'CaseOpened',
      'CaseClassified',
      'PrivacyScopeSet',
      'ClarificationRequested',
      'DeliveryRequested',
    ]);
    const [q] = ofType(out, 'DeliveryRequested');
    expect(q).toMatchObject({ kind: 'question', sourceId: vague.sourceId });
    expect(q?.content).toContain(CASE_ID);
    expect(ofType(out, 'ClarificationRequested')[0]?.missing).toEqual(
      expect.arrayContaining(['environment', 'expected', 'impact', 'evidence']),
    );
  });

  it('keeps feedback a product case: acknowledged, never dispatched', () => {
    const fb = source(
      4,
      'Feature request: it would be great to have a Gantt view for projects, we export to another tool for this',
    );
    const out = decide([], { kind: 'open_case', caseId: CASE_ID, source: fb, identity }, context([fb]));
    expect(types(out)).toEqual(['CaseOpened', 'CaseClassified', 'PrivacyScopeSet', 'DeliveryRequested']);
    expect(ofType(out, 'CaseClassified')[0]?.classification).toBe('feedback');
    expect(ofType(out, 'DeliveryRequested')[0]?.content).toMatch(/product feedback.*actionable/);
    expect(foldCase(record(out)).status).toBe('feedback');
  });

  it('keeps a private token and marked customer context out of the title, the brief and the ack', () => {
    const secret = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    const s = source(5, `${CLEAR_BUG}\nCustomer: ACME Corp, account 99812\nmy token is ${secret}`);
    const out = decide([], { kind: 'open_case', caseId: CASE_ID, source: s, identity }, context([s]));
    const all = JSON.stringify(out);
    expect(all).not.toContain(secret);
    expect(all).not.toContain('ACME');
    expect(ofType(out, 'PrivacyScopeSet')[0]?.categories).toEqual(
      expect.arrayContaining(['private_context']),
    );
    expect(ofType(out, 'TaskAssigned')[0]?.brief).toContain('Cannot find module keytar');
  });

  it('is idempotent for its own source and refuses to open an open case for another', () => {
    const h = assigned();
    expect(decide(h, { kind: 'open_case', caseId: CASE_ID, source: S1, identity }, context([S1]))).toEqual(
      [],
    );
    expect(
      decideGiven({ kind: 'open_case', caseId: CASE_ID, source: S2, identity }, h, context([S2])),
    ).toMatchObject({ ok: false, code: 'case_exists' });
  });
});

describe('case decider: sources joining', () => {
  it('links a high-confidence duplicate and tells that source it joined the case', () => {
    const out = decide(
      assigned(),
      {
        kind: 'link_source',
        source: S2,
        via: 'semantic_match',
        identity: { confidence: 0.8, reasons: ['shared exception'] },
      },
      context([S1, S2]),
    );
    expect(types(out)).toEqual(['SourceLinked', 'DeliveryRequested']);
    expect(ofType(out, 'SourceLinked')[0]).toMatchObject({ via: 'semantic_match', sourceId: S2.sourceId });
    expect(ofType(out, 'DeliveryRequested')[0]).toMatchObject({ kind: 'linked', sourceId: S2.sourceId });
    expect(ofType(out, 'DeliveryRequested')[0]?.content).toContain(CASE_ID);
  });

  it('never assigns a second task, whatever joins later', () => {
    const h = withLinked(assigned());
    const reply = source(
      6,
      'also: it happens on Windows Server too, expected it to open, blocks everyone, logs attached',
      { place: { ...S1.place, threadId: S1.place.messageId, messageId: '300000000000000006' } },
    );
    const out = decide(
      h,
      { kind: 'link_source', source: reply, via: 'thread', identity },
      context([S1, S2, reply]),
    );
    expect(types(out)).toEqual(['SourceLinked']);
    const again = decide(
      h,
      {
        kind: 'observe',
        event: recorded(
          'CaseMadeActionable',
          { reviewerId: '700000000000000001', messageId: '700000000000000002', note: null },
          'intake',
        ),
      },
      context([S1, S2]),
    );
    expect(types(again)).not.toContain('TaskAssigned');
  });

  it('updates a case from a thread reply and re-evaluates: the answer makes it actionable', () => {
    const vague = source(3, 'the export thing is broken again');
    const h = record(
      decide([], { kind: 'open_case', caseId: CASE_ID, source: vague, identity }, context([vague])),
    );
    const reply = source(
      7,
      'Windows 11, desktop app 4.3.0. I expected a CSV file but the export fails with "ENOENT: no such file or directory". Blocks our payroll run. Screenshot attached.',
      {
        place: { ...vague.place, threadId: vague.place.messageId, messageId: '300000000000000007' },
      },
    );
    const out = decide(
      h,
      { kind: 'link_source', source: reply, via: 'thread', identity },
      context([vague, reply]),
    );
    expect(types(out)).toEqual([
      'SourceLinked',
      'PrivacyScopeSet',
      'ReadinessConfirmed',
      'TaskAssigned',
      'DeliveryRequested',
    ]);
    expect(ofType(out, 'SourceLinked')[0]?.via).toBe('thread');
    expect(ofType(out, 'DeliveryRequested')[0]).toMatchObject({ kind: 'notice', sourceId: vague.sourceId });
  });

  it('does not ask the same question twice without new information', () => {
    const vague = source(3, 'the export thing is broken again');
    const h = record(
      decide([], { kind: 'open_case', caseId: CASE_ID, source: vague, identity }, context([vague])),
    );
    expect(decide(h, { kind: 'reexamine' }, context([vague]))).toEqual([]);
  });

  it('refuses to link into an unknown or closed case, and ignores a source it already has', () => {
    expect(
      decideGiven({ kind: 'link_source', source: S2, via: 'semantic_match', identity }, [], context([S2])),
    ).toMatchObject({ ok: false, code: 'case_not_found' });
    const h = assigned();
    expect(
      decide(h, { kind: 'link_source', source: S1, via: 'semantic_match', identity }, context([S1])),
    ).toEqual([]);
    const rejected = [...h, recorded('CaseRejected', { reviewerId: '700000000000000001', reason: null })];
    expect(
      decideGiven(
        { kind: 'link_source', source: S2, via: 'semantic_match', identity },
        rejected,
        context([S1, S2]),
      ),
    ).toMatchObject({ ok: false, code: 'case_closed' });
  });

  it('holds a medium match for a human, acknowledging it with the review id', () => {
    const out = decide(
      assigned(),
      {
        kind: 'hold_source',
        source: S2,
        reviewId: 'R1',
        identity: { confidence: 0.3, reasons: ['text similarity 0.3'] },
      },
      context([S1, S2]),
    );
    expect(types(out)).toEqual(['LinkReviewRequested', 'DeliveryRequested']);
    expect(ofType(out, 'DeliveryRequested')[0]).toMatchObject({ kind: 'link_review', sourceId: S2.sourceId });
    expect(ofType(out, 'DeliveryRequested')[0]?.content).toContain('same R1');
  });

  it('links a held source when a human says same, and leaves the case alone when they say different', () => {
    const h = assigned();
    const held = [
      ...h,
      ...record(decide(h, { kind: 'hold_source', source: S2, reviewId: 'R1', identity }, context([S1, S2]))),
    ];
    expect(
      decide(held, { kind: 'hold_source', source: S2, reviewId: 'R1', identity }, context([S1, S2])),
    ).toEqual([]);
    const same = recorded(
      'LinkReviewSettled',
      { reviewerId: '700000000000000001', messageId: '700000000000000003', reviewId: 'R1', verdict: 'same' },
      'intake',
    );
    const out = decide([...held, same], { kind: 'observe', event: same }, context([S1, S2]));
    expect(types(out)).toEqual(['SourceLinked', 'DeliveryRequested']);
    expect(ofType(out, 'SourceLinked')[0]?.via).toBe('link_review');
    const different = recorded(
      'LinkReviewSettled',
      {
        reviewerId: '700000000000000001',
        messageId: '700000000000000004',
        reviewId: 'R1',
        verdict: 'different',
      },
      'intake',
    );
    expect(decide([...held, different], { kind: 'observe', event: different }, context([S1, S2]))).toEqual(
      [],
    );
  });
});

describe('case decider: human turns feedback into work', () => {
  const fb = source(
    4,
    'Feature request: it would be great to have a Gantt view for projects, we export to another tool for this',
  );
  it('assigns the task once a reviewer makes feedback actionable', () => {
    const h = record(decide([], { kind: 'open_case', caseId: CASE_ID, source: fb, identity }, context([fb])));
    const made = recorded(
      'CaseMadeActionable',
      { reviewerId: '700000000000000001', messageId: '700000000000000002', note: 'do it' },
      'intake',
    );
    const out = decide([...h, made], { kind: 'observe', event: made }, context([fb]));
    expect(types(out)).toEqual(['ReadinessConfirmed', 'TaskAssigned', 'DeliveryRequested']);
  });

  it('still asks for the owner when no repository is known', () => {
    const h = record(
      decide(
        [],
        { kind: 'open_case', caseId: CASE_ID, source: fb, identity },
        context([fb], { route: null }),
      ),
    );
    const made = recorded(
      'CaseMadeActionable',
      { reviewerId: '700000000000000001', messageId: '700000000000000002', note: null },
      'intake',
    );
    const out = decide([...h, made], { kind: 'observe', event: made }, context([fb], { route: null }));
    expect(types(out)).toEqual(['ClarificationRequested', 'DeliveryRequested']);
    expect(ofType(out, 'ClarificationRequested')[0]?.missing).toEqual(['owner']);
  });
});

describe('case decider: the completion gate', () => {
  const ready = (client: 'passed' | 'blocked' = 'passed') => evidence(worker(withLinked(assigned())), client);

  it('passes all four claims and routes the receipt to every linked source', () => {
    const r = receipt();
    const out = decide([...ready(), r], { kind: 'observe', event: r }, context([S1, S2]));
    expect(types(out)).toEqual(['GateEvaluated', 'DeliveryRequested', 'DeliveryRequested']);
    const [gate] = ofType(out, 'GateEvaluated');
    expect(gate).toMatchObject({ complete: true, outcome: 'pr_ready', revision: REV_A, targetHead: HEAD_1 });
    expect(Object.values(gate!.claims).every((c) => c.ok)).toBe(true);
    expect(ofType(out, 'DeliveryRequested').map((d) => [d.kind, d.sourceId, d.receiptId])).toEqual([
      ['receipt', S1.sourceId, 'rcpt1'],
      ['receipt', S2.sourceId, 'rcpt1'],
    ]);
  });

  it('accepts the truthful "implemented; client verification blocked"', () => {
    const r = receipt('implemented_client_blocked');
    const [gate] = ofType(
      decide([...ready('blocked'), r], { kind: 'observe', event: r }, context([S1, S2])),
      'GateEvaluated',
    );
    expect(gate).toMatchObject({ complete: true, outcome: 'implemented_client_blocked' });
    expect(gate?.claims.client.detail).toMatch(/client verification blocked/);
  });

  it('refuses a receipt that claims more than the ledger shows', () => {
    const r = receipt('pr_ready');
    const out = decide([...ready('blocked'), r], { kind: 'observe', event: r }, context([S1, S2]));
    expect(types(out)).toEqual(['GateEvaluated']);
    expect(ofType(out, 'GateEvaluated')[0]).toMatchObject({ complete: false, outcome: null });
  });

  it('routes a truthful blocked receipt (the client flow failed) without calling the case complete', () => {
    const h = [
      ...worker(withLinked(assigned())),
      recorded('ClientValidationCompleted', {
        taskId: TASK,
        revision: REV_A,
        outcome: 'failed',
        reason: 'the export button does nothing',
        captureIds: ['cap1'],
      }),
      recorded('ArtifactReviewed', {
        artifactId: 'art1',
        kind: 'screenshot',
        sha256: SHA,
        decision: 'cleared',
        redactions: [],
        basis: 'fixture data',
      }),
      recorded('ArtifactStored', {
        artifactId: 'art1',
        kind: 'screenshot',
        key: `cases/${CASE_ID}/art1.png`,
        sha256: SHA,
        bytes: 10,
        contentType: 'image/png',
        revision: REV_A,
        captureId: 'cap1',
        leaseToken: 1,
      }),
    ];
    const r = recorded('ReceiptBuilt', {
      ...(receipt().data as object),
      outcome: 'blocked',
      client: { flow: 'startup', outcome: 'failed', captureIds: ['cap1'] },
    } as never);
    const out = decide([...h, r], { kind: 'observe', event: r }, context([S1, S2]));
    expect(types(out)).toEqual(['GateEvaluated', 'DeliveryRequested', 'DeliveryRequested']);
    expect(ofType(out, 'GateEvaluated')[0]).toMatchObject({ complete: false, outcome: 'blocked' });
    expect(ofType(out, 'GateEvaluated')[0]?.claims.client).toMatchObject({ ok: false });
    const routed = [...h, r, ...record(out)];
    expect(foldCase(routed).status).toBe('blocked');
    const confirmed = [
      ...routed,
      ...confirm(`receipt-rcpt1-${S1.sourceId}`, S1.sourceId),
      ...confirm(`receipt-rcpt1-${S2.sourceId}`, S2.sourceId),
    ];
    expect(decide(confirmed, { kind: 'observe', event: confirmed.at(-1)! }, context([S1, S2]))).toEqual([]);
  });

  it('refuses failing or missing configured checks', () => {
    const h = [
      ...withLinked(assigned()),
      recorded('ChecksCompleted', {
        taskId: TASK,
        revision: REV_A,
        targetHead: HEAD_1,
        passed: true,
        results: [check('lint', REV_A), check('build', REV_A)],
      }),
    ];
    const r = receipt();
    const [gate] = ofType(
      decide([...evidence(h), r], { kind: 'observe', event: r }, context([S1, S2])),
      'GateEvaluated',
    );
    expect(gate?.claims.checks).toMatchObject({ ok: false });
    expect(gate?.claims.checks.detail).toMatch(/no passing typecheck check/);
  });

  it('refuses evidence that was never stored and read back', () => {
    const h = [
      ...worker(withLinked(assigned())),
      recorded('ClientValidationCompleted', {
        taskId: TASK,
        revision: REV_A,
        outcome: 'passed',
        reason: null,
        captureIds: ['cap1'],
      }),
    ];
    const r = receipt();
    const [gate] = ofType(
      decide([...h, r], { kind: 'observe', event: r }, context([S1, S2])),
      'GateEvaluated',
    );
    expect(gate?.claims.evidence).toMatchObject({ ok: false });
    expect(gate?.complete).toBe(false);
  });

  it('marks a proof stale when the target moved after the passing run, and resumes the same task', () => {
    const h = [
      ...ready(),
      recorded(
        'TargetRevisionChecked',
        { taskId: TASK, recorded: HEAD_1, head: HEAD_2, outcome: 'moved', rebasedRevision: null },
        'worker',
      ),
    ];
    const r = receipt();
    const out = decide([...h, r], { kind: 'observe', event: r }, context([S1, S2]));
    expect(types(out)).toEqual(['GateEvaluated', 'ProofMarkedStale', 'TaskResumed']);
    expect(ofType(out, 'GateEvaluated')[0]).toMatchObject({ complete: false, targetHead: HEAD_2 });
    expect(ofType(out, 'GateEvaluated')[0]?.claims.revision.detail).toMatch(/target moved/);
    expect(ofType(out, 'TaskResumed')[0]).toMatchObject({ taskId: TASK, reason: 'stale_proof' });
  });

  it('marks a relied-on proof stale as soon as the worker reports the target moved', () => {
    const moved = recorded(
      'TargetRevisionChecked',
      { taskId: TASK, recorded: HEAD_1, head: HEAD_2, outcome: 'moved', rebasedRevision: REV_B },
      'worker',
    );
    const out = decide([...ready(), moved], { kind: 'observe', event: moved }, context([S1, S2]));
    expect(types(out)).toEqual(['ProofMarkedStale', 'TaskResumed']);
    expect(ofType(out, 'ProofMarkedStale')[0]).toMatchObject({ provenRevision: REV_A, targetHead: HEAD_2 });
    const same = recorded(
      'TargetRevisionChecked',
      { taskId: TASK, recorded: HEAD_1, head: HEAD_1, outcome: 'same', rebasedRevision: null },
      'worker',
    );
    expect(decide([...ready(), same], { kind: 'observe', event: same }, context([S1, S2]))).toEqual([]);
  });

  it('treats a late run on a superseded head as stale: the target never moves backwards', () => {
    const moved = recorded(
      'TargetRevisionChecked',
      { taskId: TASK, recorded: HEAD_1, head: HEAD_2, outcome: 'moved', rebasedRevision: null },
      'worker',
    );
    const h = [...ready(), moved];
    const resumed = [...h, ...record(decide(h, { kind: 'observe', event: moved }, context([S1, S2])))];
    const late = recorded('ChecksCompleted', {
      taskId: TASK,
      revision: REV_A,
      targetHead: HEAD_1,
      passed: true,
      results: [check('lint', REV_A)],
    });
    expect(foldCase([...resumed, late])).toMatchObject({ targetHead: HEAD_2, supersededHeads: [HEAD_1] });
    expect(types(decide([...resumed, late], { kind: 'observe', event: late }, context([S1, S2])))).toEqual([
      'ProofMarkedStale',
      'TaskResumed',
    ]);
  });

  it('does not judge a receipt for another task, or one already judged', () => {
    const r = receipt();
    const h = [...ready(), r];
    const judged = [...h, ...record(decide(h, { kind: 'observe', event: r }, context([S1, S2])))];
    expect(decide(judged, { kind: 'observe', event: r }, context([S1, S2]))).toEqual([]);
  });
});

describe('case decider: receipts confirmed, then a human decides', () => {
  function routed(): RecordedEvent[] {
    const r = receipt();
    const h = [...evidence(worker(withLinked(assigned()))), r];
    return [...h, ...record(decide(h, { kind: 'observe', event: r }, context([S1, S2])))];
  }
  const confirmedAll = (): RecordedEvent[] => {
    const h = [
      ...routed(),
      ...confirm(`receipt-rcpt1-${S1.sourceId}`, S1.sourceId),
      ...confirm(`receipt-rcpt1-${S2.sourceId}`, S2.sourceId),
    ];
    return [...h, ...record(decide(h, { kind: 'observe', event: h.at(-1)! }, context([S1, S2])))];
  };

  it('waits for every source to confirm the receipt before awaiting review', () => {
    const h = [...routed(), ...confirm(`receipt-rcpt1-${S1.sourceId}`, S1.sourceId)];
    expect(decide(h, { kind: 'observe', event: h.at(-1)! }, context([S1, S2]))).toEqual([]);
    const all = [...h, ...confirm(`receipt-rcpt1-${S2.sourceId}`, S2.sourceId)];
    const out = decide(all, { kind: 'observe', event: all.at(-1)! }, context([S1, S2]));
    expect(types(out)).toEqual(['CaseAwaitingReview']);
    expect(ofType(out, 'CaseAwaitingReview')[0]).toMatchObject({
      receiptId: 'rcpt1',
      confirmedSources: [S1.sourceId, S2.sourceId],
    });
  });

  it('does not await review while a source routed to the case is not on it yet, and does once it joined', () => {
    const S3 = source(8, 'desktop app wont start after update, cannot find module keytar, windows 11 4.3.0');
    const routedTo = [S1.sourceId, S2.sourceId, S3.sourceId];
    const h = [
      ...routed(),
      ...confirm(`receipt-rcpt1-${S1.sourceId}`, S1.sourceId),
      ...confirm(`receipt-rcpt1-${S2.sourceId}`, S2.sourceId),
    ];
    const when = { kind: 'observe' as const, event: h.at(-1)! };
    expect(decide(h, when, context([S1, S2], { routed: routedTo }))).toEqual([]);
    expect(decide(h, { kind: 'reexamine' }, context([S1, S2], { routed: routedTo }))).toEqual([]);
    // The routing's second write lands: the late source gets the receipt, and review waits for it.
    const joined = [
      ...h,
      ...record(
        decide(
          h,
          { kind: 'link_source', source: S3, via: 'semantic_match', identity },
          context([S1, S2, S3], { routed: routedTo }),
        ),
      ),
    ];
    expect(decide(joined, { kind: 'reexamine' }, context([S1, S2, S3], { routed: routedTo }))).toEqual([]);
    const all = [...joined, ...confirm(`receipt-rcpt1-${S3.sourceId}`, S3.sourceId)];
    const out = decide(
      all,
      { kind: 'observe', event: all.at(-1)! },
      context([S1, S2, S3], { routed: routedTo }),
    );
    expect(ofType(out, 'CaseAwaitingReview')[0]?.confirmedSources).toEqual(routedTo);
  });

  it('routes one receipt per thread: a reply written in a case thread shares that thread’s receipt', () => {
    const reply = source(9, 'it also happens on the portable build, log attached', {
      place: { ...S1.place, threadId: S1.place.messageId, messageId: '300000000000000019' },
    });
    const h = [...evidence(worker(withLinked(assigned())))];
    const withReply = [
      ...h,
      ...record(
        decide(h, { kind: 'link_source', source: reply, via: 'thread', identity }, context([S1, S2, reply])),
      ),
    ];
    const r = receipt();
    const out = decide([...withReply, r], { kind: 'observe', event: r }, context([S1, S2, reply]));
    expect(ofType(out, 'DeliveryRequested').map((d) => d.sourceId)).toEqual([S1.sourceId, S2.sourceId]);
    const routedH = [...withReply, r, ...record(out)];
    const all = [
      ...routedH,
      ...confirm(`receipt-rcpt1-${S1.sourceId}`, S1.sourceId),
      ...confirm(`receipt-rcpt1-${S2.sourceId}`, S2.sourceId),
    ];
    expect(types(decide(all, { kind: 'observe', event: all.at(-1)! }, context([S1, S2, reply])))).toEqual([
      'CaseAwaitingReview',
    ]);
    const late = source(10, 'and in the nightly, also blocked', {
      place: { ...S1.place, threadId: S1.place.messageId, messageId: '300000000000000020' },
    });
    expect(
      types(
        decide(
          routedH,
          { kind: 'link_source', source: late, via: 'thread', identity },
          context([S1, S2, reply, late]),
        ),
      ),
    ).toEqual(['SourceLinked']);
  });

  it('routes an already-routed receipt to a source that joins later', () => {
    const S3 = source(8, 'desktop app wont start after update, cannot find module keytar, windows 11 4.3.0');
    const out = decide(
      routed(),
      { kind: 'link_source', source: S3, via: 'semantic_match', identity },
      context([S1, S2, S3]),
    );
    expect(types(out)).toEqual(['SourceLinked', 'DeliveryRequested', 'DeliveryRequested']);
    expect(ofType(out, 'DeliveryRequested')[1]).toMatchObject({
      kind: 'receipt',
      sourceId: S3.sourceId,
      receiptId: 'rcpt1',
    });
  });

  it('approves only when awaiting review, and approval never merges', () => {
    const approve = recorded(
      'ReviewerDecided',
      { reviewerId: '700000000000000001', messageId: '700000000000000009', decision: 'approve', text: null },
      'intake',
    );
    const early = decide([...routed(), approve], { kind: 'observe', event: approve }, context([S1, S2]));
    expect(types(early)).toEqual(['DeliveryRequested']);
    expect(ofType(early, 'DeliveryRequested')[0]?.content).toMatch(/cannot be approved yet/);
    const out = decide([...confirmedAll(), approve], { kind: 'observe', event: approve }, context([S1, S2]));
    expect(types(out)).toEqual(['CaseApproved', 'DeliveryRequested', 'DeliveryRequested']);
    expect(ofType(out, 'CaseApproved')[0]).toMatchObject({ branch: `caseloop/${CASE_ID}`, revision: REV_A });
    expect(ofType(out, 'DeliveryRequested')[0]?.content).toMatch(/Nothing was merged/);
  });

  it('resumes the same task on a revision request', () => {
    const revise = recorded(
      'ReviewerDecided',
      {
        reviewerId: '700000000000000001',
        messageId: '700000000000000010',
        decision: 'revise',
        text: 'also handle the portable build',
      },
      'intake',
    );
    const out = decide([...confirmedAll(), revise], { kind: 'observe', event: revise }, context([S1, S2]));
    expect(types(out)).toEqual(['RevisionRequested', 'TaskResumed', 'DeliveryRequested']);
    expect(ofType(out, 'TaskResumed')[0]).toMatchObject({
      taskId: TASK,
      reason: 'revision_requested',
      note: 'also handle the portable build',
    });
  });

  it('rejects and cancels the task; a closed case ignores everything after', () => {
    const reject = recorded(
      'ReviewerDecided',
      {
        reviewerId: '700000000000000001',
        messageId: '700000000000000011',
        decision: 'reject',
        text: 'wrong approach',
      },
      'intake',
    );
    const h = [...confirmedAll(), reject];
    const out = decide(h, { kind: 'observe', event: reject }, context([S1, S2]));
    expect(types(out)).toEqual(['CaseRejected', 'TaskCancelled', 'DeliveryRequested', 'DeliveryRequested']);
    const closed = [...h, ...record(out)];
    expect(foldCase(closed).status).toBe('rejected');
    expect(decide(closed, { kind: 'observe', event: reject }, context([S1, S2]))).toEqual([]);
    const r = receipt();
    expect(decide([...closed, r], { kind: 'observe', event: r }, context([S1, S2]))).toEqual([]);
  });

  const movedTo = (head: string, outcome: 'moved' | 'conflict' = 'moved') =>
    recorded(
      'TargetRevisionChecked',
      {
        taskId: TASK,
        recorded: HEAD_1,
        head,
        outcome,
        rebasedRevision: outcome === 'moved' ? REV_B : null,
      },
      'worker',
    );
  const approveBy = (messageId: string) =>
    recorded(
      'ReviewerDecided',
      { reviewerId: '700000000000000001', messageId, decision: 'approve', text: null },
      'intake',
    );

  it('tells every thread shown the receipt that it went stale, once, when the target moves during review', () => {
    const moved = movedTo(HEAD_2);
    const h = [...confirmedAll(), moved];
    expect(foldCase(h).status).toBe('awaiting_review');
    const out = decide(h, { kind: 'observe', event: moved }, context([S1, S2]));
    expect(types(out)).toEqual(['ProofMarkedStale', 'TaskResumed', 'DeliveryRequested', 'DeliveryRequested']);
    const notices = ofType(out, 'DeliveryRequested');
    expect(notices.map((d) => [d.kind, d.deliveryId, d.sourceId, d.receiptId])).toEqual([
      ['notice', `stale-rcpt1-${S1.sourceId}`, S1.sourceId, null],
      ['notice', `stale-rcpt1-${S2.sourceId}`, S2.sourceId, null],
    ]);
    expect(notices.map((d) => d.place)).toEqual([S1.place, S2.place]);
    for (const n of notices) {
      expect(n.content).toContain(`The target branch \`main\` moved to \`${HEAD_2.slice(0, 12)}\``);
      expect(n.content).toContain(`proven on \`${REV_A.slice(0, 12)}\``);
      expect(n.content).toContain(CASE_ID);
      expect(n.content).toMatch(/receipt above is out of date — a new one will follow/);
    }
    // The same decision again derives the same ids; once recorded, a redelivery decides nothing.
    expect(decide(h, { kind: 'observe', event: moved }, context([S1, S2]))).toEqual(out);
    const stale = [...h, ...record(out)];
    expect(foldCase(stale).status).toBe('in_progress');
    expect(decide(stale, { kind: 'observe', event: moved }, context([S1, S2]))).toEqual([]);
    // The re-proof's next move, before any new receipt is routed, tells nobody again.
    const again = movedTo('3'.repeat(40));
    const proven = [
      ...stale,
      recorded('ChecksCompleted', {
        taskId: TASK,
        revision: REV_B,
        targetHead: HEAD_2,
        passed: true,
        results: [check('lint', REV_B)],
      }),
      again,
    ];
    expect(types(decide(proven, { kind: 'observe', event: again }, context([S1, S2])))).toEqual([
      'ProofMarkedStale',
      'TaskResumed',
    ]);
  });

  it('tells only the threads the receipt reached, once per thread', () => {
    const S3 = source(8, 'desktop app wont start after update, cannot find module keytar, windows 11 4.3.0');
    const reply = source(9, 'same here', {
      place: { ...S1.place, threadId: S1.place.messageId, messageId: '300000000000000019' },
    });
    // S2's receipt was refused by Discord; S3 joined after routing and was caught up; a reply shares S1's thread.
    let h: RecordedEvent[] = [
      ...routed(),
      recorded(
        'DeliveryRefused',
        {
          deliveryId: `receipt-rcpt1-${S2.sourceId}`,
          chunkIndex: 0,
          sourceId: S2.sourceId,
          reason: 'channel_gone',
          detail: 'the thread is gone',
        },
        'intake',
      ),
    ];
    for (const [src, via] of [
      [S3, 'semantic_match'],
      [reply, 'thread'],
    ] as const) {
      h = [
        ...h,
        ...record(
          decide(h, { kind: 'link_source', source: src, via, identity }, context([S1, S2, S3, reply])),
        ),
      ];
    }
    const moved = movedTo(HEAD_2);
    const out = decide([...h, moved], { kind: 'observe', event: moved }, context([S1, S2, S3, reply]));
    expect(ofType(out, 'DeliveryRequested').map((d) => d.deliveryId)).toEqual([
      `stale-rcpt1-${S1.sourceId}`,
      `stale-rcpt1-${S3.sourceId}`,
    ]);
  });

  it('tells the threads too when the gate is the first to see the move (a receipt judged again after it)', () => {
    const h = routed();
    const moved = movedTo(HEAD_2);
    const again = recorded('ReceiptBuilt', { ...(receipt().data as object), receiptId: 'rcpt2' } as never);
    const out = decide([...h, moved, again], { kind: 'observe', event: again }, context([S1, S2]));
    expect(types(out)).toEqual([
      'GateEvaluated',
      'ProofMarkedStale',
      'TaskResumed',
      'DeliveryRequested',
      'DeliveryRequested',
    ]);
    expect(ofType(out, 'DeliveryRequested').map((d) => [d.kind, d.deliveryId])).toEqual([
      ['notice', `stale-rcpt1-${S1.sourceId}`],
      ['notice', `stale-rcpt1-${S2.sourceId}`],
    ]);
  });

  it('names the conflict instead of promising a new receipt when the change no longer applies', () => {
    const moved = movedTo(HEAD_2, 'conflict');
    const out = decide([...confirmedAll(), moved], { kind: 'observe', event: moved }, context([S1, S2]));
    const [n] = ofType(out, 'DeliveryRequested');
    expect(n?.content).toMatch(/a human needs to resolve the conflict/);
    expect(n?.content).not.toMatch(/a new one will follow/);
  });

  it('refuses an approval that arrives after the stale mark, and one racing the unmarked move', () => {
    const moved = movedTo(HEAD_2);
    const h = [...confirmedAll(), moved];
    const stale = [...h, ...record(decide(h, { kind: 'observe', event: moved }, context([S1, S2])))];
    const late = approveBy('700000000000000012');
    const out = decide([...stale, late], { kind: 'observe', event: late }, context([S1, S2]));
    expect(types(out)).toEqual(['DeliveryRequested']);
    expect(ofType(out, 'DeliveryRequested')[0]).toMatchObject({ kind: 'notice', sourceId: S1.sourceId });
    expect(ofType(out, 'DeliveryRequested')[0]?.content).toMatch(
      /cannot be approved yet: it is in progress, and approval needs a receipt confirmed/,
    );
    // The worker reported the move but the coordinator has not marked it yet: the approval marks it.
    const racing = approveBy('700000000000000013');
    const first = decide([...h, racing], { kind: 'observe', event: racing }, context([S1, S2]));
    expect(types(first)).toEqual([
      'ProofMarkedStale',
      'TaskResumed',
      'DeliveryRequested',
      'DeliveryRequested',
      'DeliveryRequested',
    ]);
    expect(ofType(first, 'DeliveryRequested').map((d) => d.deliveryId)).toEqual([
      `stale-rcpt1-${S1.sourceId}`,
      `stale-rcpt1-${S2.sourceId}`,
      'notice-700000000000000013',
    ]);
    expect(ofType(first, 'DeliveryRequested')[2]?.content).toMatch(
      /cannot be approved: the target branch moved/,
    );
    const after = [...h, racing, ...record(first)];
    expect(decide(after, { kind: 'observe', event: moved }, context([S1, S2]))).toEqual([]);
  });

  it('tells the reporter about a blocker, redacting secrets in its detail', () => {
    const b = recorded(
      'BlockerRaised',
      {
        taskId: TASK,
        kind: 'permissions',
        detail: 'push refused for token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8',
      },
      'worker',
    );
    const out = decide([...assigned(), b], { kind: 'observe', event: b }, context([S1]));
    expect(ofType(out, 'DeliveryRequested')[0]).toMatchObject({ kind: 'blocker', sourceId: S1.sourceId });
    expect(JSON.stringify(out)).not.toContain('ghp_A1b2');
  });

  it('reexamine resumes a task its worker went silent on, once per silence, with the same task id', () => {
    const h = assigned();
    const later = context([S1], { now: '2026-11-29T15:00:00.000Z' });
    const out = decide(h, { kind: 'reexamine' }, later);
    expect(types(out)).toEqual(['TaskResumed']);
    expect(ofType(out, 'TaskResumed')[0]).toMatchObject({ taskId: TASK, reason: 'worker_restart' });
    const resumed = [...h, ...record(out)].map((e) =>
      e.type === 'TaskResumed' ? { ...e, occurredAt: '2026-11-29T15:00:00.000Z' } : e,
    ) as RecordedEvent[];
    expect(decide(resumed, { kind: 'reexamine' }, later)).toEqual([]);
    expect(decide(h, { kind: 'reexamine' }, context([S1], { now: '2026-11-29T12:30:00.000Z' }))).toEqual([]);
  });

  it('reexamine finishes what a crash interrupted: an unjudged receipt, a confirmed but unannounced review', () => {
    const r = receipt();
    const h = [...evidence(worker(withLinked(assigned()))), r];
    expect(types(decide(h, { kind: 'reexamine' }, context([S1, S2])))).toEqual([
      'GateEvaluated',
      'DeliveryRequested',
      'DeliveryRequested',
    ]);
    const confirmed = [
      ...routed(),
      ...confirm(`receipt-rcpt1-${S1.sourceId}`, S1.sourceId),
      ...confirm(`receipt-rcpt1-${S2.sourceId}`, S2.sourceId),
    ];
    expect(types(decide(confirmed, { kind: 'reexamine' }, context([S1, S2])))).toEqual([
      'CaseAwaitingReview',
    ]);
    expect(decideGiven({ kind: 'reexamine' }, [], context([]))).toMatchObject({
      ok: false,
      code: 'case_not_found',
    });
  });
});

describe('case decider: an optional classifier', () => {
  it('records its answer as by: classifier, and the rules still gate dispatch on it', () => {
    const out = decide(
      [],
      { kind: 'open_case', caseId: CASE_ID, source: S1, identity },
      context([S1], {
        classifier: { classification: 'feedback', confidence: 0.8, reasons: ['model says feedback'] },
      }),
    );
    expect(ofType(out, 'CaseClassified')[0]).toMatchObject({ classification: 'feedback', by: 'classifier' });
    expect(types(out)).not.toContain('TaskAssigned');
  });
});
