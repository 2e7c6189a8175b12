import { draft, EventData, EventDraft, RecordedEvent } from '@caseloop/contracts';

/**
 * What the evidence service still owes a passing check run, decided from the case's events alone
 * so that a redelivered `ChecksCompleted` never repeats work that is already in the ledger.
 */
export interface EvidenceTrigger {
  /** Stream sequence of the `ChecksCompleted` event: unique, so it names the commands it causes. */
  seq: number;
  eventId: string;
  caseId: string;
  taskId: string;
  revision: string;
  targetHead: string;
}

export type EvidenceStep =
  | { status: 'gather_proof' }
  | { status: 'build_receipt' }
  | { status: 'done' }
  /** A later passing check run exists: this one's proof would already be historical. */
  | { status: 'superseded'; by: number };

export const proofCommandId = (t: EvidenceTrigger): string => `ev-${t.seq}-proof`;
export const receiptCommandId = (t: EvidenceTrigger): string => `ev-${t.seq}-receipt`;
export const receiptIdOf = (t: EvidenceTrigger): string => `receipt-${t.seq}`;
/** The artifact id of the output of the check at `index` of a run: how a receipt finds a check's log. */
export const checkLogArtifactId = (index: number, outputSha256: string): string =>
  `log-${index}-${outputSha256.slice(0, 16)}`;

export function triggerOf(event: RecordedEvent): EvidenceTrigger | null {
  if (event.type !== 'ChecksCompleted' || !event.data.passed) return null;
  return {
    seq: event.seq,
    eventId: event.eventId,
    caseId: event.aggregateId,
    taskId: event.data.taskId,
    revision: event.data.revision,
    targetHead: event.data.targetHead,
  };
}

export function nextStep(events: readonly RecordedEvent[], trigger: EvidenceTrigger): EvidenceStep {
  const later = events.find((e) => e.type === 'ChecksCompleted' && e.data.passed && e.seq > trigger.seq);
  const ran = (commandId: string): boolean =>
    events.some((e) => e.producer === 'evidence' && e.commandId === commandId);
  if (ran(receiptCommandId(trigger))) return { status: 'done' };
  if (later) return { status: 'superseded', by: later.seq };
  if (ran(proofCommandId(trigger))) return { status: 'build_receipt' };
  return { status: 'gather_proof' };
}

export const approvalCommandId = (approval: { seq: number }): string => `ev-${approval.seq}-privacy`;
export const approvalReceiptIdOf = (t: EvidenceTrigger, approval: { seq: number }): string =>
  `receipt-${t.seq}-${approval.seq}`;

/**
 * A reviewer's privacy approval changes what the current receipt may link: answer with the check
 * run whose receipt must be built again, or null when the approval changes nothing (another
 * revision's artifact, already shareable, or already handled).
 */
export function receiptToRebuild(
  events: readonly RecordedEvent[],
  approval: RecordedEvent,
): EvidenceTrigger | null {
  if (approval.type !== 'PrivacyApproved') return null;
  if (events.some((e) => e.producer === 'evidence' && e.commandId === approvalCommandId(approval)))
    return null;
  const checks = events.filter((e) => e.type === 'ChecksCompleted' && e.data.passed).at(-1);
  const trigger = checks ? triggerOf(checks) : null;
  if (!trigger) return null;
  const receipt = events.filter((e) => e.type === 'ReceiptBuilt' && e.seq > trigger.seq).at(-1);
  if (receipt?.type !== 'ReceiptBuilt' || receipt.data.revision !== trigger.revision) return null;
  const waiting = receipt.data.evidence.some(
    (e) => e.sha256 === approval.data.artifactSha256 && !e.shareable,
  );
  return waiting ? trigger : null;
}

/** The repository and client the task was assigned, as the coordinator recorded them. */
export function repositoryOf(events: readonly RecordedEvent[], taskId: string): string | null {
  const assigned = events.filter((e) => e.type === 'TaskAssigned' && e.data.taskId === taskId).at(-1);
  return assigned?.type === 'TaskAssigned' ? assigned.data.repository : null;
}

export interface CaptureFact {
  captureId: string;
  step: string;
  page: { url: string; title: string };
  sha256: string;
  leaseToken: number;
  takenAt: string;
}

export interface ClientFacts {
  flow: string;
  resource: string;
  outcome: 'passed' | 'failed' | 'blocked';
  /** Already privacy-reviewed: it reaches the receipt verbatim. */
  reason: string | null;
  captures: CaptureFact[];
  voided: { captureId: string; reason: 'lease_expired' | 'lease_foreign' | 'wrong_page' }[];
}

type Review = EventData<'ArtifactReviewed'>;

export type ArtifactFact =
  | { review: Review; stored: Omit<EventData<'ArtifactStored'>, 'artifactId' | 'kind' | 'sha256'> }
  | { review: Review; lost: { key: string; actual: string | null } }
  /** Reviewed but not stored: rejected by review (e.g. a check output whose digest did not match). */
  | { review: Review };

export function proofEvents(
  trigger: EvidenceTrigger,
  client: ClientFacts | null,
  artifacts: readonly ArtifactFact[],
): EventDraft[] {
  const out: EventDraft[] = [];
  const { taskId, revision } = trigger;
  if (client) {
    out.push(
      draft('ClientValidationStarted', { taskId, revision, flow: client.flow, resource: client.resource }),
    );
    for (const c of client.captures) {
      out.push(draft('CaptureTaken', { taskId, revision, resource: client.resource, ...c }));
    }
    for (const v of client.voided) out.push(draft('CaptureVoided', v));
    out.push(
      draft('ClientValidationCompleted', {
        taskId,
        revision,
        outcome: client.outcome,
        reason: client.reason,
        captureIds: client.captures.map((c) => c.captureId),
      }),
    );
  }
  for (const a of artifacts) {
    out.push(draft('ArtifactReviewed', a.review));
    if ('stored' in a) {
      out.push(
        draft('ArtifactStored', {
          artifactId: a.review.artifactId,
          kind: a.review.kind,
          sha256: a.review.sha256,
          ...a.stored,
        }),
      );
    } else if ('lost' in a) {
      out.push(
        draft('ArtifactDurabilityFailed', {
          artifactId: a.review.artifactId,
          key: a.lost.key,
          expected: a.review.sha256,
          actual: a.lost.actual,
        }),
      );
    }
  }
  return out;
}
