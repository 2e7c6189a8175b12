import type { RecordedEvent } from '@caseloop/contracts';
import type { Stack } from '@caseloop/stack';

/**
 * What a newcomer watching `npm start` wants to see: one line per step of a case, and a line for
 * every point where the case waits for a person (a question to the reporter, a held link, a
 * hand-off), so a quiet terminal never looks like a stuck system.
 */
export function narrate(e: RecordedEvent, stack: Pick<Stack, 'urls' | 'remote'>): string | null {
  const c = e.aggregateId;
  switch (e.type) {
    case 'CaseOpened':
      return `case ${c} opened: ${stack.urls.casePage}/cases/${c}`;
    case 'SourceLinked':
      return e.data.via === 'thread'
        ? `case ${c}: a reply in its thread joined the case (${e.data.sourceId})`
        : `case ${c}: another report linked (${e.data.sourceId})`;
    case 'LinkReviewRequested':
      return `case ${c}: report ${e.data.sourceId} may be the same bug: held until a reviewer writes "same" or "different" in its thread`;
    case 'CaseClassified':
      return `case ${c}: classified ${e.data.classification}${e.data.classification === 'feedback' ? ' (a product case: a reviewer writes "actionable" in the thread to make it a task)' : ''}`;
    case 'ClarificationRequested':
      return `case ${c}: waits for the reporter: asked in the thread for ${e.data.missing.join(', ').replace(/_/g, ' ')} (reply there as the reporter)`;
    case 'ClarificationHandedOff':
      return `case ${c}: still missing ${e.data.missing.join(', ').replace(/_/g, ' ')} after ${e.data.rounds} question(s): handed to a reviewer ("actionable" in the thread makes it a task)`;
    case 'TaskAssigned':
      return `case ${c}: task ${e.data.taskId} assigned`;
    // A repository's install and checks can take minutes: each step is said as it ends.
    case 'CheckStarted':
      return e.data.index === 0
        ? `case ${c}: checks running at ${e.data.revision.slice(0, 12)} (${e.data.total} step${e.data.total === 1 ? '' : 's'})`
        : null;
    case 'CheckFinished': {
      const r = e.data.result;
      const how =
        r.outcome === 'passed' || r.outcome === 'skipped'
          ? r.outcome
          : `${r.outcome}${r.exitCode !== null ? ` (exit ${r.exitCode})` : ''}`;
      return `case ${c}: ${e.data.index + 1}/${e.data.total} ${r.name} ${how} in ${(r.durationMs / 1000).toFixed(1)} s`;
    }
    case 'ChecksCompleted':
      return `case ${c}: checks ${e.data.passed ? 'passed' : 'failed'} at ${e.data.revision.slice(0, 12)} (target ${e.data.targetHead.slice(0, 12)})`;
    case 'BranchPushed':
      return `case ${c}: branch ${e.data.branch} pushed to ${stack.remote.path}`;
    case 'ClientValidationCompleted':
      return `case ${c}: client flow ${e.data.outcome}${e.data.reason ? ` (${e.data.reason})` : ''}`;
    case 'ArtifactStored':
      if (e.data.kind !== 'screenshot') return null;
      return `case ${c}: screenshot stored and read back: ${stack.urls.services.evidence}/evidence/cases/${c}/${e.data.revision}/${e.data.sha256}`;
    case 'ReceiptBuilt':
      return `case ${c}: receipt built (${e.data.outcome})`;
    case 'ProofMarkedStale':
      return `case ${c}: proof is stale (the target branch moved)`;
    case 'CaseAwaitingReview':
      return `case ${c}: receipts confirmed in every thread: awaiting a reviewer (write "approve" in the thread as rita)`;
    case 'CaseApproved':
      return `case ${c}: approved; branch ${e.data.branch} waits for a human to merge it`;
    case 'RevisionRequested':
      return `case ${c}: revision requested`;
    case 'CaseRejected':
      return `case ${c}: rejected`;
    case 'BlockerRaised':
      return `case ${c}: blocked: ${e.data.kind}`;
    default:
      return null;
  }
}
