import { draft, eventDefinition, EventDraft, RecordedEvent } from '@caseloop/contracts';
import {
  nextStep,
  proofCommandId,
  proofEvents,
  receiptCommandId,
  receiptToRebuild,
  triggerOf,
} from './evidence.decider';

const CASE = 'C01JDECIDER00000000000000000';
const REV = 'd'.repeat(40);
const HEAD = 'e'.repeat(40);
const SHA = 'f'.repeat(64);

/** Given: recorded events; `commandId` is what the evidence service would have used. */
function given(items: { d: EventDraft; commandId?: string }[]): RecordedEvent[] {
  return items.map(({ d, commandId }, i) => {
    const def = eventDefinition(d.type);
    if (!def) throw new Error(d.type);
    const cmd = commandId ?? `c${i}`;
    return {
      eventId: `${cmd}:0`,
      type: d.type,
      version: def.version,
      aggregate: 'case',
      aggregateId: CASE,
      producer: def.producer,
      commandId: cmd,
      causationId: null,
      correlationId: 'x',
      occurredAt: '2026-11-29T20:00:00.000Z',
      data: def.schema.parse(d.data),
      seq: i + 1,
      subject: `caseloop.case.${CASE}.${def.producer}`,
    } as RecordedEvent;
  });
}

const checks = (passed = true) =>
  draft('ChecksCompleted', {
    taskId: 'T1',
    revision: REV,
    targetHead: HEAD,
    passed,
    results: [
      {
        name: 'lint',
        kind: 'lint',
        outcome: passed ? 'passed' : 'failed',
        revision: REV,
        durationMs: 1,
        exitCode: 0,
        outputSha256: null,
        outputBytes: 0,
      },
    ],
  });
const stored = draft('ArtifactStored', {
  artifactId: 'log-1',
  kind: 'check_log',
  key: `cases/${CASE}/${REV}/${SHA}`,
  sha256: SHA,
  bytes: 1,
  contentType: 'text/plain',
  revision: REV,
  captureId: null,
  leaseToken: null,
});
const receipt = (shareable: boolean) =>
  draft('ReceiptBuilt', {
    receiptId: 'r1',
    taskId: 'T1',
    revision: REV,
    outcome: 'pr_ready',
    checks: [],
    client: { flow: 'f', outcome: 'passed', captureIds: [] },
    evidence: [{ key: `cases/${CASE}/${REV}/${SHA}`, sha256: SHA, kind: 'screenshot', shareable }],
    residualRisk: 'none',
    humanAction: 'decide',
    rendered: 'receipt',
    builtAt: '2026-11-29T20:00:00.000Z',
  });

describe('evidence decider', () => {
  it('reacts only to passing check runs', () => {
    const [fail, pass] = given([{ d: checks(false) }, { d: checks(true) }]);
    expect(triggerOf(fail as RecordedEvent)).toBeNull();
    expect(triggerOf(pass as RecordedEvent)).toMatchObject({
      seq: 2,
      caseId: CASE,
      revision: REV,
      targetHead: HEAD,
    });
  });

  it('resumes from what the ledger holds: gather proof, then the receipt, then nothing', () => {
    const [c] = given([{ d: checks() }]);
    const t = triggerOf(c as RecordedEvent);
    if (!t) throw new Error('no trigger');
    expect(nextStep(given([{ d: checks() }]), t)).toEqual({ status: 'gather_proof' });
    expect(nextStep(given([{ d: checks() }, { d: stored, commandId: proofCommandId(t) }]), t)).toEqual({
      status: 'build_receipt',
    });
    expect(
      nextStep(
        given([
          { d: checks() },
          { d: stored, commandId: proofCommandId(t) },
          { d: receipt(true), commandId: receiptCommandId(t) },
        ]),
        t,
      ),
    ).toEqual({
      status: 'done',
    });
  });

  it('leaves a check run alone once a later one passed: its proof would be historical', () => {
    const events = given([{ d: checks() }, { d: checks() }]);
    const t = triggerOf(events[0] as RecordedEvent);
    if (!t) throw new Error('no trigger');
    expect(nextStep(events, t)).toEqual({ status: 'superseded', by: 2 });
  });

  it('lays out the client phase and the artifacts as events in order', () => {
    const [c] = given([{ d: checks() }]);
    const t = triggerOf(c as RecordedEvent);
    if (!t) throw new Error('no trigger');
    const out = proofEvents(
      t,
      {
        flow: 'caseloop/flow.js',
        resource: 'browser:default',
        outcome: 'failed',
        reason: 'lease lost',
        captures: [
          {
            captureId: 'cap-1',
            step: 's',
            page: { url: 'http://127.0.0.1:1/', title: 'T' },
            sha256: SHA,
            leaseToken: 4,
            takenAt: '2026-11-29T20:00:00.000Z',
          },
        ],
        voided: [{ captureId: 'cap-2', reason: 'lease_expired' }],
      },
      [
        {
          review: {
            artifactId: 'cap-1',
            kind: 'screenshot',
            sha256: SHA,
            decision: 'cleared',
            redactions: [],
            basis: 'fixture',
          },
          lost: { key: `cases/${CASE}/${REV}/${SHA}`, actual: null },
        },
      ],
    );
    expect(out.map((e) => e.type)).toEqual([
      'ClientValidationStarted',
      'CaptureTaken',
      'CaptureVoided',
      'ClientValidationCompleted',
      'ArtifactReviewed',
      'ArtifactDurabilityFailed',
    ]);
    expect(out[3]?.data).toMatchObject({ outcome: 'failed', captureIds: ['cap-1'] });
  });

  it('rebuilds the receipt only for an approval of an artifact it lists unlinked, once', () => {
    const approve = (sha: string) =>
      draft('PrivacyApproved', { reviewerId: '1', messageId: '2', artifactSha256: sha });
    const waiting = given([{ d: checks() }, { d: receipt(false) }, { d: approve(SHA) }]);
    expect(receiptToRebuild(waiting, waiting[2] as RecordedEvent)).toMatchObject({ seq: 1, revision: REV });
    const other = given([{ d: checks() }, { d: receipt(false) }, { d: approve('0'.repeat(64)) }]);
    expect(receiptToRebuild(other, other[2] as RecordedEvent)).toBeNull();
    const linked = given([{ d: checks() }, { d: receipt(true) }, { d: approve(SHA) }]);
    expect(receiptToRebuild(linked, linked[2] as RecordedEvent)).toBeNull();
    const handled = given([
      { d: checks() },
      { d: receipt(false) },
      { d: approve(SHA) },
      { d: receipt(true), commandId: 'ev-3-privacy' },
    ]);
    expect(receiptToRebuild(handled, handled[2] as RecordedEvent)).toBeNull();
  });
});
