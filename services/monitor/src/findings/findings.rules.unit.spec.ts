import type { EventDraft, RecordedEvent } from '@caseloop/contracts';
import {
  detectFindings,
  DEFAULT_POLICY,
  findingId,
  improvementCandidates,
  projectionDeadLetterFinding,
} from './findings.rules';

const CASE = 'C01JMONITORTEST0000000000';
const R1 = 'a'.repeat(40);
const R2 = 'b'.repeat(40);
const place = { guildId: '1', channelId: '2', threadId: '3', messageId: '4' };
const PRODUCER: Record<string, RecordedEvent['producer']> = {
  CaseOpened: 'coordinator',
  TaskAssigned: 'coordinator',
  GateEvaluated: 'coordinator',
  DeliveryRequested: 'coordinator',
  CaseAwaitingReview: 'coordinator',
  ReceiptBuilt: 'evidence',
  CaptureTaken: 'evidence',
  ChecksCompleted: 'worker',
  DeliveryIntended: 'intake',
  DeliveryConfirmed: 'intake',
  LeaseExpired: 'lease',
};

/** A history where event i happened at minute i after t0. */
function history(t0: number, ...drafts: EventDraft[]): RecordedEvent[] {
  return drafts.map((d, i) => {
    const producer = PRODUCER[d.type] ?? 'coordinator';
    return {
      ...d,
      eventId: `e${i}:0`,
      version: 1,
      aggregate: 'case',
      aggregateId: CASE,
      producer,
      commandId: `e${i}`,
      causationId: null,
      correlationId: 'c',
      occurredAt: new Date(t0 + i * 60_000).toISOString(),
      seq: i + 1,
      subject: `caseloop.case.${CASE}.${producer}`,
    } as RecordedEvent;
  });
}

const t0 = Date.parse('2026-11-29T10:00:00Z');
const opened: EventDraft = {
  type: 'CaseOpened',
  data: { sourceId: 'discord-4', place, reporterId: '9', title: 'Total wrong', confidence: 1, reasons: [] },
};
const assigned: EventDraft = {
  type: 'TaskAssigned',
  data: {
    taskId: 'T1',
    repository: 'shop',
    targetBranch: 'main',
    targetRevision: R1,
    brief: 'fix the total',
  },
};
const gate = (revision: string, targetHead: string): EventDraft => ({
  type: 'GateEvaluated',
  data: {
    taskId: 'T1',
    revision,
    targetHead,
    claims: {
      checks: { ok: true, detail: '' },
      revision: { ok: true, detail: '' },
      client: { ok: true, detail: '' },
      evidence: { ok: true, detail: '' },
    },
    complete: true,
    outcome: 'pr_ready',
  },
});
const checks = (revision: string, targetHead: string): EventDraft => ({
  type: 'ChecksCompleted',
  data: {
    taskId: 'T1',
    revision,
    targetHead,
    passed: true,
    results: [
      {
        name: 'unit',
        kind: 'focused_test',
        outcome: 'passed',
        revision,
        durationMs: 1,
        exitCode: 0,
        outputSha256: null,
        outputBytes: 0,
      },
    ],
  },
});

describe('monitor findings', () => {
  it('stays quiet on a case that is moving within its budget', () => {
    const events = history(t0, opened, assigned);
    expect(detectFindings(events, new Date(t0 + 5 * 60_000))).toEqual([]);
  });

  it('addresses no progress to the owner of the next step', () => {
    const events = history(t0, opened, assigned);
    const late = new Date(t0 + 60_000 + (DEFAULT_POLICY.stepBudgetMs.in_progress ?? 0) + 60_000);
    expect(detectFindings(events, late)).toEqual([
      expect.objectContaining({ kind: 'no_progress', owner: 'worker', observedSeq: 2 }),
    ]);
  });

  it('flags a proof older than the target head seen after it', () => {
    const events = history(t0, opened, assigned, checks(R1, R1), gate(R1, R1), checks(R1, R2));
    const kinds = detectFindings(events, new Date(t0 + 6 * 60_000)).map((f) => f.kind);
    expect(kinds).toContain('stale_proof');
  });

  it('stays quiet when the head seen after the proof is the one it was proven on (the branch revision differs from it)', () => {
    const branch = 'c'.repeat(40);
    const events = history(t0, opened, assigned, checks(branch, R1), gate(branch, R1), checks(branch, R1));
    expect(detectFindings(events, new Date(t0 + 6 * 60_000)).map((f) => f.kind)).not.toContain('stale_proof');
    const moved = history(t0, opened, assigned, checks(branch, R1), gate(branch, R1), checks(branch, R2));
    expect(detectFindings(moved, new Date(t0 + 6 * 60_000)).map((f) => f.kind)).toContain('stale_proof');
  });

  it('flags awaiting_review without the receipt confirmed at every source', () => {
    const events = history(
      t0,
      opened,
      assigned,
      gate(R1, R1),
      {
        type: 'ReceiptBuilt',
        data: {
          receiptId: 'R1',
          taskId: 'T1',
          revision: R1,
          outcome: 'pr_ready',
          checks: [],
          client: { flow: null, outcome: 'passed', captureIds: [] },
          evidence: [],
          residualRisk: 'none',
          humanAction: 'approve',
          rendered: 'receipt',
          builtAt: new Date(t0).toISOString(),
        },
      },
      {
        type: 'DeliveryRequested',
        data: {
          deliveryId: 'D1',
          sourceId: 'discord-4',
          kind: 'receipt',
          place,
          content: 'r',
          receiptId: 'R1',
        },
      },
      { type: 'CaseAwaitingReview', data: { receiptId: 'R1', confirmedSources: ['discord-4'] } },
    );
    const found = detectFindings(events, new Date(t0 + 7 * 60_000));
    expect(found).toEqual([expect.objectContaining({ kind: 'unsupported_status', owner: 'coordinator' })]);
  });

  it('flags a delivery stuck in intent, and clears it once confirmed', () => {
    const intended: EventDraft = {
      type: 'DeliveryIntended',
      data: {
        deliveryId: 'D1',
        chunkIndex: 0,
        sourceId: 'discord-4',
        chunkCount: 1,
        nonce: 'n',
        channelId: '2',
        threadId: '3',
        contentSha256: 'c'.repeat(64),
        length: 10,
        intendedAt: new Date(t0).toISOString(),
      },
    };
    const late = new Date(t0 + 30 * 60_000);
    expect(detectFindings(history(t0, opened, intended), late).map((f) => f.kind)).toContain(
      'delivery_stuck',
    );
    const confirmed: EventDraft = {
      type: 'DeliveryConfirmed',
      data: {
        deliveryId: 'D1',
        chunkIndex: 0,
        sourceId: 'discord-4',
        discordMessageId: '77',
        channelId: '2',
        threadId: '3',
        reconciled: false,
      },
    };
    expect(detectFindings(history(t0, opened, intended, confirmed), late).map((f) => f.kind)).not.toContain(
      'delivery_stuck',
    );
  });

  it('flags a capture taken after its lease expired that was not voided', () => {
    const expired: EventDraft = {
      type: 'LeaseExpired',
      data: {
        resource: 'browser:default',
        taskId: 'T1',
        revision: R1,
        token: 5,
        expiredAt: new Date(t0).toISOString(),
      },
    };
    const capture: EventDraft = {
      type: 'CaptureTaken',
      data: {
        taskId: 'T1',
        revision: R1,
        captureId: 'K1',
        resource: 'browser:default',
        leaseToken: 5,
        step: 'total',
        page: { url: 'http://127.0.0.1/', title: 'Cart' },
        sha256: 'd'.repeat(64),
        takenAt: new Date(t0 + 1000).toISOString(),
      },
    };
    const found = detectFindings(history(t0, opened, expired, capture), new Date(t0 + 3 * 60_000));
    expect(found).toEqual([
      expect.objectContaining({ kind: 'lease_expired_during_capture', owner: 'evidence' }),
    ]);
  });

  it('observes a dead letter at its message: one finding per consumer and message, whatever the case did since', () => {
    const events = history(t0, opened, assigned);
    const letter = (seq: number, consumer: string) => ({
      seq,
      consumer,
      owner: consumer === 'worker' ? ('worker' as const) : ('evidence' as const),
      reason: 'poison: cannot handle it',
    });
    const found = detectFindings(events, new Date(t0 + 3 * 60_000), DEFAULT_POLICY, [
      letter(1, 'evidence'),
      letter(2, 'evidence'),
      letter(1, 'worker'),
    ]);
    expect(found).toEqual([
      {
        kind: 'dead_letter',
        owner: 'evidence',
        observedSeq: 1,
        consumer: 'evidence',
        detail: 'stream seq 1 dead-lettered by evidence: poison: cannot handle it',
      },
      {
        kind: 'dead_letter',
        owner: 'evidence',
        observedSeq: 2,
        consumer: 'evidence',
        detail: 'stream seq 2 dead-lettered by evidence: poison: cannot handle it',
      },
      {
        kind: 'dead_letter',
        owner: 'worker',
        observedSeq: 1,
        consumer: 'worker',
        detail: 'stream seq 1 dead-lettered by worker: poison: cannot handle it',
      },
    ]);
    expect(new Set(found.map((f) => findingId(CASE, f))).size).toBe(3);
  });

  it('names a finding by its case, kind and observed sequence (and a dead letter’s consumer) as a safe id', () => {
    const gap = { kind: 'no_progress' as const, owner: 'worker' as const, detail: 'stalled', observedSeq: 7 };
    expect(findingId('C1', gap)).toBe('finding-C1-no_progress-7');
    const letter = { ...gap, kind: 'dead_letter' as const, consumer: 'evidence.replay*' };
    expect(findingId('C1', letter)).toBe('finding-C1-dead_letter-7-evidence_replay_');
    expect(findingId('C1', { ...letter, consumer: 'x'.repeat(200) })).toMatch(
      /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/,
    );
  });

  it('addresses a projection dead letter to the monitor, on its case when it was on a case subject', () => {
    const letter = {
      projection: 'case-view',
      version: 3,
      seq: 4711,
      subject: `caseloop.case.${CASE}.worker`,
      code: 'unknown_event_version',
      error: 'seq 4711: AttemptFinished v2 is newer than this reader (v1); upgrade the reader',
    };
    const onCase = projectionDeadLetterFinding(letter);
    expect(onCase.target).toEqual({ aggregate: 'case', caseId: CASE });
    expect(onCase.finding).toMatchObject({ kind: 'dead_letter', owner: 'monitor', observedSeq: 4711 });
    expect(onCase.findingId).toBe(`finding-${CASE}-dead_letter-4711-projection-case-view-v3`);
    expect(onCase.finding.detail).toBe(
      `projection case-view v3 could not apply stream seq 4711 (caseloop.case.${CASE}.worker): ` +
        'unknown_event_version: seq 4711: AttemptFinished v2 is newer than this reader (v1); upgrade the reader; ' +
        'the read model lacks this event until it is applied: `caseloop dead-letters` lists it; ' +
        'upgrade the reader, then `caseloop dead-letters --redrive 4711`; many of them: `caseloop rebuild case-view`',
    );
    // The same message dead-lettered again by a rebuilt version is another finding.
    expect(projectionDeadLetterFinding({ ...letter, version: 4 }).findingId).not.toBe(onCase.findingId);

    const offCase = projectionDeadLetterFinding({ ...letter, subject: 'caseloop.source.discord-1.intake' });
    expect(offCase.target).toEqual({ aggregate: 'ops' });
    expect(offCase.findingId).toBe('finding-ops-dead_letter-4711-projection-case-view-v3');
    expect(offCase.findingId).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/);
  });

  it('names a projection dead letter’s error without the message body, bounded', () => {
    const junk = projectionDeadLetterFinding({
      projection: 'case-view',
      version: 1,
      seq: 9,
      subject: 'caseloop.case.C1.coordinator',
      code: 'malformed_json',
      error: `message at seq 9 is not JSON: Unexpected token 's', "secret-token-${'x'.repeat(20)}" is not valid JSON`,
    });
    expect(junk.finding.detail).toContain(
      "malformed_json: message at seq 9 is not JSON: Unexpected token 's' (body not shown);",
    );
    expect(junk.finding.detail).not.toContain('secret-token');

    const long = projectionDeadLetterFinding({
      projection: 'case-view',
      version: 1,
      seq: 10,
      subject: `caseloop.case.${'C'.repeat(128)}.coordinator`,
      code: 'invalid_payload',
      error: 'y'.repeat(5_000),
    });
    expect(long.finding.detail).toMatch(/invalid_payload: y{239}…; the read model lacks this event/);
    expect(long.finding.detail.length).toBeLessThanOrEqual(1000);
    expect(long.findingId).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/);
  });

  it('turns the same gap in three cases within the window into an improvement candidate', () => {
    const at = new Date(t0).toISOString();
    const recent = [
      { caseId: 'C1', kind: 'delivery_stuck' as const, at },
      { caseId: 'C2', kind: 'delivery_stuck' as const, at },
      { caseId: 'C2', kind: 'delivery_stuck' as const, at },
      { caseId: 'C3', kind: 'no_progress' as const, at },
    ];
    const window = { start: new Date(t0 - 1), end: new Date(t0 + 1) };
    expect(improvementCandidates(recent, window, 2)).toEqual([
      { kind: 'delivery_stuck', caseIds: ['C1', 'C2'] },
    ]);
    expect(improvementCandidates(recent, window, 3)).toEqual([]);
  });
});
