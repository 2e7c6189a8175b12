import type { RecordedEvent } from '@caseloop/contracts';
import type { Claim, Described } from './case-detail.types';
import { list, pct, safeText, short } from './view-text';
import { describeWorkEvent } from './work-event-summary.view';

/** A case's timeline: what each event says, as a reviewer may see it. */
export type { Described };

/**
 * One line (and a few facts) per event. Exhaustive on purpose: a new event type does not reach the
 * page until someone decided which of its fields a reviewer may see.
 */
export function describeEvent(e: RecordedEvent): Described {
  switch (e.type) {
    case 'SourceReceived':
      // The report's words are private context: only where and how it came in.
      return {
        summary: `Report received via ${e.data.via}`,
        facts: [
          { label: 'source', value: e.data.sourceId },
          { label: 'author', value: e.data.authorId },
          { label: 'length', value: `${e.data.rawChars} visible characters` },
          { label: 'attachments', value: String(e.data.attachments.length) },
          { label: 'raw text', value: e.data.sealed ? 'sealed' : 'not kept' },
        ],
      };
    case 'SourceForgotten':
      return {
        summary: `Raw text forgotten (${e.data.reason === 'message_deleted' ? 'message deleted in Discord' : 'operator'})`,
        facts: [{ label: 'source', value: e.data.sourceId }],
      };
    case 'SourceDropped':
      return {
        summary: `Message dropped: ${e.data.reason}`,
        tone: 'warn',
        facts: [{ label: 'source', value: e.data.sourceId }],
      };
    case 'DropNoticeSent':
      return { summary: `Drop notice sent (${e.data.reason})` };
    case 'ReadReceiptAdded':
      return {
        summary: `Read receipt ${e.data.emoji} added`,
        facts: [{ label: 'message', value: e.data.messageId }],
      };
    case 'DeliveryIntended':
      return {
        summary: `Delivery chunk ${e.data.chunkIndex + 1}/${e.data.chunkCount} intended`,
        facts: [
          { label: 'delivery', value: e.data.deliveryId },
          { label: 'source', value: e.data.sourceId },
          { label: 'nonce', value: e.data.nonce },
        ],
      };
    case 'DeliveryConfirmed':
      return {
        summary: `Delivery chunk ${e.data.chunkIndex + 1} confirmed by Discord${e.data.reconciled ? ' (reconciled)' : ''}`,
        tone: 'good',
        facts: [
          { label: 'delivery', value: e.data.deliveryId },
          { label: 'source', value: e.data.sourceId },
          { label: 'discord message', value: e.data.discordMessageId },
        ],
      };
    case 'DeliveryRefused':
      return {
        summary: `Delivery chunk ${e.data.chunkIndex + 1} refused: ${e.data.reason}`,
        tone: 'bad',
        facts: [
          { label: 'delivery', value: e.data.deliveryId },
          { label: 'source', value: e.data.sourceId },
          { label: 'detail', value: safeText(e.data.detail) },
        ],
      };
    case 'ReviewerDecided':
      return {
        summary: `Reviewer decided: ${e.data.decision}`,
        tone: e.data.decision === 'approve' ? 'good' : e.data.decision === 'reject' ? 'bad' : 'warn',
        facts: [
          { label: 'reviewer', value: e.data.reviewerId },
          ...(e.data.text ? [{ label: 'text', value: safeText(e.data.text) }] : []),
        ],
      };
    case 'LinkReviewSettled':
      return {
        summary: `Link review ${e.data.reviewId} settled: ${e.data.verdict}`,
        tone: 'info',
        facts: [{ label: 'reviewer', value: e.data.reviewerId }],
      };
    case 'CaseMadeActionable':
      return {
        summary: 'Made actionable by a reviewer',
        tone: 'info',
        facts: [{ label: 'reviewer', value: e.data.reviewerId }],
      };
    case 'PrivacyApproved':
      return {
        summary: 'Artifact approved for sharing',
        tone: 'good',
        facts: [
          { label: 'sha-256', value: e.data.artifactSha256 },
          { label: 'reviewer', value: e.data.reviewerId },
        ],
      };
    case 'CommandRefused':
      return {
        summary: `Command ${e.data.command} refused: ${e.data.reason}`,
        tone: 'warn',
        facts: [{ label: 'author', value: e.data.authorId }],
      };
    case 'DeltaFetched':
      return { summary: `Delta fetched: ${e.data.recorded}/${e.data.fetched} recorded` };
    case 'CaseOpened':
      return {
        summary: `Case opened (identity confidence ${pct(e.data.confidence)})`,
        tone: 'info',
        facts: [
          { label: 'title', value: safeText(e.data.title) },
          { label: 'source', value: e.data.sourceId },
        ],
        reasons: e.data.reasons.map(safeText),
      };
    case 'SourceLinked':
      return {
        summary: `Source linked via ${e.data.via} (confidence ${pct(e.data.confidence)})`,
        tone: 'info',
        facts: [
          { label: 'source', value: e.data.sourceId },
          { label: 'reporter', value: e.data.reporterId },
        ],
        reasons: e.data.reasons.map(safeText),
      };
    case 'LinkReviewRequested':
      return {
        summary: `Link review requested (confidence ${pct(e.data.confidence)}): a human decides`,
        tone: 'warn',
        facts: [
          { label: 'review', value: e.data.reviewId },
          { label: 'source', value: e.data.sourceId },
        ],
        reasons: e.data.reasons.map(safeText),
      };
    case 'CaseClassified':
      return {
        summary: `Classified as ${e.data.classification} by ${e.data.by} (${pct(e.data.confidence)})`,
        reasons: e.data.reasons.map(safeText),
      };
    case 'ClarificationRequested':
      return {
        summary: `Clarification requested: missing ${list(e.data.missing)}`,
        tone: 'warn',
        facts: [{ label: 'question', value: safeText(e.data.question) }],
      };
    case 'ClarificationHandedOff':
      return {
        summary: `Handed to a reviewer after ${e.data.rounds} round(s) without progress: missing ${list(e.data.missing)}`,
        tone: 'warn',
        facts: e.data.known.map((k) => ({ label: 'known', value: safeText(k) })),
      };
    case 'ReadinessJudged':
      return e.data.fallback
        ? {
            summary: `Readiness route ${e.data.route} fell back (${e.data.fallback.reason}): the rules decided`,
            tone: 'warn',
            facts: [
              { label: 'detail', value: safeText(e.data.fallback.detail) },
              { label: 'prompt', value: e.data.promptHash },
            ],
          }
        : {
            summary: `Readiness judged by ${e.data.route}: missing ${list(e.data.missing)}`,
            facts: [
              { label: 'supplied', value: list(e.data.supplied) },
              { label: 'prompt', value: e.data.promptHash },
            ],
            reasons: e.data.rationale ? [safeText(e.data.rationale)] : [],
          };
    case 'ReadinessConfirmed':
      return {
        summary: 'Ready: actionable',
        tone: 'good',
        facts: [
          { label: 'owner', value: e.data.owner },
          { label: 'repository', value: e.data.repository },
        ],
      };
    case 'PrivacyScopeSet':
      // The sanitized brief is the coding task's input, not a receipt's: categories and counts only.
      return {
        summary: `Privacy scope: ${e.data.redactions} redaction(s)`,
        facts: [{ label: 'categories', value: list(e.data.categories) }],
      };
    case 'TaskAssigned':
      return {
        summary: `Task ${e.data.taskId} assigned`,
        tone: 'info',
        facts: [
          { label: 'repository', value: e.data.repository },
          { label: 'target', value: `${e.data.targetBranch} @ ${short(e.data.targetRevision)}` },
        ],
      };
    case 'TaskResumed':
      return {
        summary: `Task resumed: ${e.data.reason}`,
        facts: e.data.note ? [{ label: 'note', value: safeText(e.data.note) }] : [],
      };
    case 'TaskCancelled':
      return {
        summary: 'Task cancelled',
        tone: 'warn',
        facts: [{ label: 'reason', value: safeText(e.data.reason) }],
      };
    case 'DeliveryRequested':
      return {
        summary: `Delivery requested: ${e.data.kind}`,
        facts: [
          { label: 'delivery', value: e.data.deliveryId },
          { label: 'source', value: e.data.sourceId },
          { label: 'thread', value: e.data.place.threadId ?? `(new thread on ${e.data.place.messageId})` },
        ],
      };
    case 'GateEvaluated':
      return {
        summary: `Gate: ${e.data.complete ? 'complete' : 'incomplete'}${e.data.outcome ? ` → ${e.data.outcome}` : ''}`,
        tone: e.data.complete ? 'good' : 'bad',
        facts: [
          { label: 'revision', value: short(e.data.revision) },
          { label: 'target head', value: short(e.data.targetHead) },
        ],
        claims: claimsOf(e),
      };
    case 'ProofMarkedStale':
      return {
        summary: 'Proof marked stale: the target branch moved',
        tone: 'bad',
        facts: [
          { label: 'proven on', value: short(e.data.provenRevision) },
          { label: 'target head', value: short(e.data.targetHead) },
        ],
      };
    case 'CaseAwaitingReview':
      return {
        summary: `Awaiting a human decision (receipt ${e.data.receiptId})`,
        tone: 'info',
        facts: [{ label: 'confirmed in', value: list(e.data.confirmedSources) }],
      };
    case 'CaseApproved':
      return {
        summary: 'Approved (nothing merged)',
        tone: 'good',
        facts: [
          { label: 'branch', value: e.data.branch ?? '—' },
          { label: 'revision', value: short(e.data.revision) },
        ],
      };
    case 'RevisionRequested':
      return {
        summary: 'Revision requested',
        tone: 'warn',
        facts: [{ label: 'text', value: safeText(e.data.text) }],
      };
    case 'CaseRejected':
      return {
        summary: 'Rejected',
        tone: 'bad',
        facts: e.data.reason ? [{ label: 'reason', value: safeText(e.data.reason) }] : [],
      };
    case 'CaseMarkedDuplicate':
      return { summary: `Marked duplicate of ${e.data.intoCaseId}`, tone: 'warn' };
    case 'SourceRouted':
      return {
        summary: `Identity decision: ${e.data.outcome} (confidence ${pct(e.data.confidence)})`,
        tone: 'info',
        facts: [
          { label: 'case', value: e.data.caseId },
          ...(e.data.matchedWith ? [{ label: 'matched with', value: e.data.matchedWith }] : []),
        ],
        reasons: e.data.reasons.map(safeText),
      };
    case 'ClockTicked':
      return { summary: 'Clock ticked' };
    default:
      // The rest of the events (worker, lease, client validation, evidence, monitor).
      return describeWorkEvent(e);
  }
}

export function claimsOf(e: RecordedEvent<'GateEvaluated'>): Claim[] {
  const c = e.data.claims;
  return (['checks', 'revision', 'client', 'evidence'] as const).map((name) => ({
    name,
    ok: c[name].ok,
    detail: safeText(c[name].detail),
  }));
}
