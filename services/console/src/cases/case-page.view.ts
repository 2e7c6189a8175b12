import { CASE_STATUSES, CaseStatus, CaseView, isTerminal, LedgerStats } from '@caseloop/case-model';
import type { RecordedEvent } from '@caseloop/contracts';
import { sanitizeReport } from '@caseloop/privacy';

/**
 * What the case page shows, as plain data (also its JSON variant). Pure: rows and events in, view
 * out; time comes in as `now`. Every free text a report could have shaped goes through the
 * privacy redaction here, and a source's own words (`SourceReceived.content`) never enter a view:
 * the page shows what a receipt may show.
 */

export const safeText = (text: string): string => sanitizeReport(text).brief;

/** One row of the `cases` reader view, as the reader hands it over. */
export interface CaseRow {
  caseId: string;
  status: CaseStatus;
  title: string;
  classification: string | null;
  taskId: string | null;
  revision: string | null;
  openedAt: string;
  updatedAt: string;
  lastSeq: number;
  lastEventType: string;
  eventCount: number;
  sources: number;
}

export interface CaseListItem extends CaseRow {
  live: boolean;
  ageMinutes: number;
  lastEventAgoMinutes: number;
}

export interface CaseListView {
  kind: 'cases';
  generatedAt: string;
  filter: { status: CaseStatus | 'live' | null };
  statuses: readonly CaseStatus[];
  counts: Partial<Record<CaseStatus, number>>;
  stats: LedgerStats & { eventsRead: number };
  waiting: number;
  /** Findings that belong to no case, all of them (the `/findings` page lists the most recent). */
  opsFindings: number;
  cases: CaseListItem[];
}

export type StatusFilter = CaseStatus | 'live' | null;

export function parseStatusFilter(value: string | null | undefined): StatusFilter | 'invalid' {
  if (value === null || value === undefined || value === '' || value === 'all') return null;
  if (value === 'live') return 'live';
  return (CASE_STATUSES as readonly string[]).includes(value) ? (value as CaseStatus) : 'invalid';
}

const minutesBetween = (from: string, now: string): number =>
  Math.max(0, Math.floor((Date.parse(now) - Date.parse(from)) / 60_000));

/** Live cases first (most recently moved first), then the settled ones. */
export function caseList(input: {
  rows: readonly CaseRow[];
  counts: Partial<Record<CaseStatus, number>>;
  stats: LedgerStats & { eventsRead: number };
  waiting: number;
  opsFindings: number;
  filter: StatusFilter;
  now: string;
}): CaseListView {
  const cases = input.rows
    .filter(
      (r) =>
        input.filter === null ||
        (input.filter === 'live' ? !isTerminal(r.status) : r.status === input.filter),
    )
    .map((r) => ({
      ...r,
      title: safeText(r.title),
      live: !isTerminal(r.status),
      ageMinutes: minutesBetween(r.openedAt, input.now),
      lastEventAgoMinutes: minutesBetween(r.updatedAt, input.now),
    }))
    .sort(
      (a, b) =>
        Number(b.live) - Number(a.live) ||
        Date.parse(b.updatedAt) - Date.parse(a.updatedAt) ||
        a.caseId.localeCompare(b.caseId),
    );
  return {
    kind: 'cases',
    generatedAt: input.now,
    filter: { status: input.filter },
    statuses: CASE_STATUSES,
    counts: input.counts,
    stats: input.stats,
    waiting: input.waiting,
    opsFindings: input.opsFindings,
    cases,
  };
}

// ---------------------------------------------------------------------------------------------
// Findings that belong to no case

/** How many ops findings the `/findings` page shows: the most recent ones. */
export const OPS_FINDINGS_SHOWN = 50;

export interface OpsFindingView {
  /** The finding's own stream sequence. */
  seq: number;
  findingId: string;
  kind: string;
  owner: string;
  detail: string;
  /** The stream sequence the finding is about (a dead letter's message). */
  observedSeq: number;
  occurredAt: string;
}

export interface OpsFindingsView {
  kind: 'ops_findings';
  generatedAt: string;
  /** Every ops finding in the projection; `findings` holds at most `OPS_FINDINGS_SHOWN` of them. */
  total: number;
  findings: OpsFindingView[];
}

/** Newest first, at most `OPS_FINDINGS_SHOWN`, the detail redacted like every other free text. */
export function opsFindingList(input: {
  events: readonly RecordedEvent<'OpsFindingRecorded'>[];
  total: number;
  now: string;
}): OpsFindingsView {
  const findings = [...input.events]
    .sort((a, b) => b.seq - a.seq)
    .slice(0, OPS_FINDINGS_SHOWN)
    .map((e) => ({
      seq: e.seq,
      findingId: e.data.findingId,
      kind: e.data.kind,
      owner: e.data.owner,
      detail: safeText(e.data.detail),
      observedSeq: e.data.observedSeq,
      occurredAt: e.occurredAt,
    }));
  return {
    kind: 'ops_findings',
    generatedAt: input.now,
    total: Math.max(input.total, findings.length),
    findings,
  };
}

// ---------------------------------------------------------------------------------------------
// One case

export interface Fact {
  label: string;
  value: string;
}

export interface Claim {
  name: 'checks' | 'revision' | 'client' | 'evidence';
  ok: boolean;
  detail: string;
}

export type Tone = 'neutral' | 'good' | 'bad' | 'warn' | 'info';

export interface TimelineEntry {
  seq: number;
  type: string;
  producer: string;
  aggregate: string;
  occurredAt: string;
  tone: Tone;
  summary: string;
  facts: Fact[];
  reasons: string[];
  claims: Claim[] | null;
}

export type DeliveryState = 'confirmed' | 'partly_confirmed' | 'intended' | 'requested' | 'refused';

export interface DeliveryLine {
  deliveryId: string;
  kind: string;
  receiptId: string | null;
  state: DeliveryState;
  chunks: { confirmed: number; total: number | null };
  discordMessageIds: string[];
  refusal: string | null;
}

export interface SourceThread {
  sourceId: string;
  channelId: string;
  threadId: string | null;
  messageId: string;
  reporterId: string;
  via: string;
  deliveries: DeliveryLine[];
}

export interface EvidenceItem {
  artifactId: string;
  kind: string;
  key: string;
  sha256: string;
  bytes: number;
  contentType: string;
  revision: string;
  captureId: string | null;
  leaseToken: number | null;
  step: string | null;
  pageTitle: string | null;
  review: string | null;
  /** Linked only when cleared by its review or approved by a reviewer. */
  shareable: boolean;
  /** The evidence service's stable address (302 to a short-lived presigned link), when shareable. */
  url: string | null;
  thumbnail: boolean;
}

export interface ReceiptView {
  receiptId: string;
  seq: number;
  outcome: string;
  revision: string;
  builtAt: string;
  /** As the evidence service rendered it. */
  rendered: string;
  /** What the outbox was asked to post, grouped by identical text, with the threads it went to. */
  posted: { sourceIds: string[]; content: string }[];
  residualRisk: string;
  humanAction: string;
  /** Per source thread: was this receipt confirmed there. */
  threads: { sourceId: string; state: DeliveryState | 'not_routed' }[];
}

export interface FindingView {
  seq: number;
  findingId: string;
  kind: string;
  owner: string;
  detail: string;
  occurredAt: string;
}

export interface CandidateView {
  candidateId: string;
  kind: string;
  caseIds: string[];
  summary: string;
  windowStart: string;
  windowEnd: string;
}

export interface DeadLetterView {
  origin: 'consumer' | 'projection';
  seq: number;
  consumer: string;
  code: string | null;
  reason: string | null;
}

export interface WaitingItem {
  kind: 'link_review' | 'privacy_approval' | 'decision';
  caseId: string;
  caseTitle: string;
  detail: string;
  since: string;
  ref: string;
}

export interface CaseDetailView {
  kind: 'case';
  generatedAt: string;
  summary: {
    caseId: string;
    title: string;
    status: CaseStatus;
    live: boolean;
    classification: string | null;
    owner: string | null;
    taskId: string | null;
    repository: string | null;
    targetBranch: string | null;
    revision: string | null;
    targetHead: string | null;
    branch: string | null;
    openedAt: string;
    updatedAt: string;
    lastSeq: number;
    privacyCategories: string[];
    missing: string[];
    decision: CaseView['decision'];
  };
  sources: SourceThread[];
  timeline: TimelineEntry[];
  gate: { seq: number; complete: boolean; outcome: string | null; revision: string; claims: Claim[] } | null;
  evidence: EvidenceItem[];
  receipts: ReceiptView[];
  findings: FindingView[];
  candidates: CandidateView[];
  deadLetters: DeadLetterView[];
  waiting: WaitingItem[];
  /** The latest run of the checks, check by check, as the worker reports it while they run. */
  checks: ChecksProgressView | null;
}

export interface CheckProgressLine {
  index: number;
  name: string;
  kind: string;
  status: 'running' | 'passed' | 'failed' | 'timeout' | 'error' | 'skipped';
  startedAt: string;
  durationMs: number | null;
  /** The last lines of its (redacted) output, once it finished. */
  tail: string[];
}

export interface ChecksProgressView {
  revision: string;
  attemptId: string | null;
  total: number;
  running: boolean;
  lines: CheckProgressLine[];
}

const short = (rev: string | null): string => (rev ? rev.slice(0, 10) : '—');
const pct = (x: number): string => `${Math.round(x * 100)}%`;
const list = (xs: readonly string[]): string => (xs.length === 0 ? '—' : xs.join(', '));

interface Described {
  summary: string;
  tone?: Tone;
  facts?: Fact[];
  reasons?: string[];
  claims?: Claim[];
}

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
    case 'WorktreePrepared':
      return {
        summary: `Worktree ${e.data.reused ? 'reused' : 'prepared'} on ${e.data.branch}`,
        facts: [{ label: 'base', value: short(e.data.baseRevision) }],
      };
    case 'TargetRevisionChecked':
      return {
        summary: `Target revision checked: ${e.data.outcome}`,
        tone: e.data.outcome === 'same' ? 'neutral' : 'warn',
        facts: [
          { label: 'recorded', value: short(e.data.recorded) },
          { label: 'head', value: short(e.data.head) },
        ],
      };
    case 'AttemptStarted':
      return { summary: `Attempt ${e.data.attempt} started (${e.data.route.name}, ${e.data.route.kind})` };
    case 'AttemptFinished':
      return {
        summary: `Attempt finished: ${e.data.outcome}`,
        tone: e.data.outcome === 'changed' ? 'neutral' : 'warn',
        facts: [
          { label: 'route', value: e.data.route.name },
          { label: 'revision', value: short(e.data.revision) },
          { label: 'checks', value: e.data.checks.map((c) => `${c.name} ${c.outcome}`).join(', ') || '—' },
        ],
      };
    case 'EscalationUsed':
      return { summary: `Escalation used (${e.data.route.name}) on ${e.data.focusedCheck}`, tone: 'warn' };
    case 'CheckStarted':
      return {
        summary: `Check ${e.data.index + 1}/${e.data.total} started: ${e.data.name} (${e.data.kind})`,
        facts: [{ label: 'revision', value: short(e.data.revision) }],
      };
    case 'CheckFinished':
      return {
        summary: `Check ${e.data.index + 1}/${e.data.total} ${e.data.result.outcome}: ${e.data.result.name}`,
        tone: CHECK_TONE[e.data.result.outcome],
        facts: [
          { label: 'took', value: `${(e.data.result.durationMs / 1000).toFixed(1)} s` },
          { label: 'output', value: `${e.data.result.outputBytes} bytes` },
          ...(e.data.excerpt.tail.length > 0
            ? [{ label: 'last lines', value: safeText(e.data.excerpt.tail.slice(-3).join(' ⏎ ')) }]
            : []),
        ],
      };
    case 'ChecksCompleted':
      return {
        summary: `Checks ${e.data.passed ? 'passed' : 'failed'} on ${short(e.data.revision)}`,
        tone: e.data.passed ? 'good' : 'bad',
        facts: [
          { label: 'target head', value: short(e.data.targetHead) },
          { label: 'results', value: e.data.results.map((c) => `${c.name} ${c.outcome}`).join(', ') },
        ],
      };
    case 'BranchPushed':
      return { summary: `Branch ${e.data.branch} pushed at ${short(e.data.revision)}`, tone: 'good' };
    case 'BlockerRaised':
      return {
        summary: `Blocker: ${e.data.kind}`,
        tone: 'bad',
        facts: [{ label: 'detail', value: safeText(e.data.detail) }],
      };
    case 'WorktreeRemoved':
      return { summary: `Worktree removed (${e.data.reason})` };
    case 'LeaseRequested':
      return { summary: `Lease on ${e.data.resource} requested (position ${e.data.position})` };
    case 'LeaseGranted':
      return {
        summary: `Lease on ${e.data.resource} granted, token ${e.data.token}`,
        facts: [{ label: 'expires', value: e.data.expiresAt }],
      };
    case 'LeaseRenewed':
      return { summary: `Lease token ${e.data.token} renewed` };
    case 'LeaseReleased':
      return {
        summary: `Lease token ${e.data.token} released`,
        facts: [{ label: 'captures', value: list(e.data.captureIds) }],
      };
    case 'LeaseExpired':
      return { summary: `Lease token ${e.data.token} expired`, tone: 'warn' };
    case 'LeaseRefused':
      return { summary: `Lease refused: ${e.data.reason}`, tone: 'warn' };
    case 'ClientValidationStarted':
      return {
        summary: `Client validation started: flow ${e.data.flow}`,
        facts: [{ label: 'revision', value: short(e.data.revision) }],
      };
    case 'CaptureTaken':
      return {
        summary: `Capture ${e.data.captureId} taken`,
        facts: [
          { label: 'lease token', value: String(e.data.leaseToken) },
          { label: 'revision', value: short(e.data.revision) },
          { label: 'step', value: safeText(e.data.step) },
        ],
      };
    case 'CaptureVoided':
      return { summary: `Capture ${e.data.captureId} voided: ${e.data.reason}`, tone: 'bad' };
    case 'ClientValidationCompleted':
      return {
        summary: `Client validation ${e.data.outcome}`,
        tone: e.data.outcome === 'passed' ? 'good' : 'bad',
        facts: e.data.reason ? [{ label: 'reason', value: safeText(e.data.reason) }] : [],
      };
    case 'ArtifactReviewed':
      return {
        summary: `Artifact ${e.data.artifactId} (${e.data.kind}) reviewed: ${e.data.decision}`,
        tone: e.data.decision === 'needs_human' ? 'warn' : e.data.decision === 'rejected' ? 'bad' : 'neutral',
        facts: [
          {
            label: 'redactions',
            value: e.data.redactions.map((r) => `${r.category} ×${r.count}`).join(', ') || 'none',
          },
        ],
      };
    case 'ArtifactStored':
      return {
        summary: `Artifact ${e.data.artifactId} stored and read back`,
        tone: 'good',
        facts: [{ label: 'sha-256', value: e.data.sha256 }],
      };
    case 'ArtifactDurabilityFailed':
      return { summary: `Artifact ${e.data.artifactId} failed its read-back`, tone: 'bad' };
    case 'ReceiptBuilt':
      return { summary: `Receipt ${e.data.receiptId} built: ${e.data.outcome}`, tone: 'info' };
    case 'FindingRecorded':
      return {
        summary: `Finding: ${e.data.kind} → ${e.data.owner}`,
        tone: 'warn',
        facts: [{ label: 'detail', value: safeText(e.data.detail) }],
      };
    case 'OpsFindingRecorded':
      return {
        summary: `Ops finding: ${e.data.kind} → ${e.data.owner}`,
        tone: 'warn',
        facts: [{ label: 'detail', value: safeText(e.data.detail) }],
      };
    case 'ImprovementCandidateRecorded':
      return {
        summary: `Improvement candidate: ${e.data.kind}`,
        tone: 'info',
        facts: [{ label: 'summary', value: safeText(e.data.summary) }],
      };
    default:
      return assertNever(e);
  }
}

const CHECK_TONE = {
  passed: 'good',
  skipped: 'neutral',
  failed: 'bad',
  timeout: 'bad',
  error: 'warn',
} as const;

function assertNever(e: never): never {
  throw new Error(`no description for event ${(e as { type: string }).type}`);
}

function claimsOf(e: RecordedEvent<'GateEvaluated'>): Claim[] {
  const c = e.data.claims;
  return (['checks', 'revision', 'client', 'evidence'] as const).map((name) => ({
    name,
    ok: c[name].ok,
    detail: safeText(c[name].detail),
  }));
}

function postedReceipts(events: readonly RecordedEvent[], receiptId: string): ReceiptView['posted'] {
  const groups = new Map<string, string[]>();
  for (const e of events) {
    if (e.type !== 'DeliveryRequested' || e.data.kind !== 'receipt' || e.data.receiptId !== receiptId)
      continue;
    const content = safeText(e.data.content);
    groups.set(content, [...(groups.get(content) ?? []), e.data.sourceId]);
  }
  return [...groups].map(([content, sourceIds]) => ({ sourceIds, content }));
}

function deliveryLines(state: CaseView, events: readonly RecordedEvent[]): Map<string, DeliveryLine[]> {
  const bySource = new Map<string, DeliveryLine[]>();
  const messages = new Map<string, string[]>();
  const refusals = new Map<string, string>();
  const intended = new Set<string>();
  for (const e of events) {
    if (e.type === 'DeliveryConfirmed')
      messages.set(e.data.deliveryId, [...(messages.get(e.data.deliveryId) ?? []), e.data.discordMessageId]);
    if (e.type === 'DeliveryRefused') refusals.set(e.data.deliveryId, e.data.reason);
    if (e.type === 'DeliveryIntended') intended.add(e.data.deliveryId);
  }
  for (const d of state.deliveries) {
    const line: DeliveryLine = {
      deliveryId: d.deliveryId,
      kind: d.kind,
      receiptId: d.receiptId,
      state: deliveryState(d, intended.has(d.deliveryId)),
      chunks: { confirmed: d.confirmedChunks.length, total: d.chunkCount },
      discordMessageIds: messages.get(d.deliveryId) ?? [],
      refusal: refusals.get(d.deliveryId) ?? null,
    };
    bySource.set(d.sourceId, [...(bySource.get(d.sourceId) ?? []), line]);
  }
  return bySource;
}

function deliveryState(d: CaseView['deliveries'][number], wasIntended: boolean): DeliveryState {
  if (d.refused) return 'refused';
  if (d.confirmed) return 'confirmed';
  if (d.confirmedChunks.length > 0) return 'partly_confirmed';
  return wasIntended ? 'intended' : 'requested';
}

/** Mirrors what the evidence service will link: stored, and cleared by review or approved by a reviewer. */
function evidenceItems(events: readonly RecordedEvent[], evidenceBaseUrl: string | null): EvidenceItem[] {
  const captures = new Map<string, RecordedEvent<'CaptureTaken'>>();
  const reviews = new Map<string, RecordedEvent<'ArtifactReviewed'>>();
  const approved = new Set<string>();
  for (const e of events) {
    if (e.type === 'CaptureTaken') captures.set(e.data.captureId, e);
    if (e.type === 'ArtifactReviewed') reviews.set(e.data.artifactId, e);
    if (e.type === 'PrivacyApproved') approved.add(e.data.artifactSha256);
  }
  const out: EvidenceItem[] = [];
  for (const e of events) {
    if (e.type !== 'ArtifactStored') continue;
    const d = e.data;
    const review = reviews.get(d.artifactId)?.data.decision ?? null;
    const shareable =
      review === 'cleared' || review === 'redacted' || (review === 'needs_human' && approved.has(d.sha256));
    const capture = d.captureId ? captures.get(d.captureId) : undefined;
    const url =
      shareable && evidenceBaseUrl
        ? `${evidenceBaseUrl}/evidence/${d.key.split('/').map(encodeURIComponent).join('/')}`
        : null;
    out.push({
      artifactId: d.artifactId,
      kind: d.kind,
      key: d.key,
      sha256: d.sha256,
      bytes: d.bytes,
      contentType: d.contentType,
      revision: d.revision,
      captureId: d.captureId,
      leaseToken: d.leaseToken ?? capture?.data.leaseToken ?? null,
      step: capture ? safeText(capture.data.step) : null,
      pageTitle: capture ? safeText(capture.data.page.title) : null,
      review,
      shareable,
      url,
      thumbnail: url !== null && d.kind === 'screenshot' && d.contentType.startsWith('image/'),
    });
  }
  return out;
}

/** What waits for a human on this case: held reports, artifacts awaiting approval, the decision. */
export function waitingOn(state: CaseView, events: readonly RecordedEvent[]): WaitingItem[] {
  const out: WaitingItem[] = [];
  const title = safeText(state.title);
  const requested = new Map<string, RecordedEvent<'LinkReviewRequested'>>();
  for (const e of events) if (e.type === 'LinkReviewRequested') requested.set(e.data.reviewId, e);
  for (const r of state.linkReviews) {
    if (r.verdict !== null) continue;
    out.push({
      kind: 'link_review',
      caseId: state.caseId,
      caseTitle: title,
      detail: `Is source ${r.sourceId} (reporter ${r.reporterId}) the same problem? Confidence ${pct(r.confidence)}.`,
      since: requested.get(r.reviewId)?.occurredAt ?? state.updatedAt,
      ref: r.reviewId,
    });
  }
  const approved = new Set<string>();
  for (const e of events) if (e.type === 'PrivacyApproved') approved.add(e.data.artifactSha256);
  const latestReview = new Map<string, RecordedEvent<'ArtifactReviewed'>>();
  for (const e of events) if (e.type === 'ArtifactReviewed') latestReview.set(e.data.artifactId, e);
  for (const e of latestReview.values()) {
    if (e.data.decision !== 'needs_human' || approved.has(e.data.sha256)) continue;
    out.push({
      kind: 'privacy_approval',
      caseId: state.caseId,
      caseTitle: title,
      detail: `${e.data.kind} ${e.data.artifactId} (sha-256 ${e.data.sha256.slice(0, 12)}…) waits for a reviewer's privacy approval.`,
      since: e.occurredAt,
      ref: e.data.sha256,
    });
  }
  if (state.status === 'awaiting_review' && state.decision === null) {
    const at = [...events].reverse().find((e) => e.type === 'CaseAwaitingReview');
    out.push({
      kind: 'decision',
      caseId: state.caseId,
      caseTitle: title,
      detail: `Receipt ${state.latestReceiptId ?? '—'} confirmed in every thread: approve, revise or reject.`,
      since: at?.occurredAt ?? state.updatedAt,
      ref: state.latestReceiptId ?? state.caseId,
    });
  }
  return out;
}

/**
 * The latest run of the checks from the worker's CheckStarted/CheckFinished events: the run that
 * began with the most recent first check; a check without its end is running.
 */
export function checksProgress(events: readonly RecordedEvent[]): ChecksProgressView | null {
  const starts = events.filter((e): e is RecordedEvent<'CheckStarted'> => e.type === 'CheckStarted');
  const first = starts.filter((e) => e.data.index === 0).at(-1) ?? starts[0];
  if (!first) return null;
  const { revision, attemptId } = first.data;
  const inRun = <T extends RecordedEvent>(e: T, rev: string | undefined, attempt: string | null) =>
    e.seq >= first.seq && rev === revision && attempt === attemptId;
  const runStarts = starts.filter((e) => inRun(e, e.data.revision, e.data.attemptId));
  const ends = new Map(
    events
      .filter((e): e is RecordedEvent<'CheckFinished'> => e.type === 'CheckFinished')
      .filter((e) => inRun(e, e.data.result.revision, e.data.attemptId))
      .map((e) => [e.data.index, e] as const),
  );
  const lines = runStarts.map((st): CheckProgressLine => {
    const end = ends.get(st.data.index);
    return {
      index: st.data.index,
      name: st.data.name,
      kind: st.data.kind,
      status: end ? end.data.result.outcome : 'running',
      startedAt: st.occurredAt,
      durationMs: end ? end.data.result.durationMs : null,
      tail: end ? end.data.excerpt.tail.slice(-3).map(safeText) : [],
    };
  });
  return {
    revision,
    attemptId,
    total: first.data.total,
    running: lines.some((l) => l.status === 'running'),
    lines,
  };
}

export function caseDetail(input: {
  state: CaseView;
  /** The case's events and those of its sources' subjects, any order. */
  events: readonly RecordedEvent[];
  candidates: readonly RecordedEvent<'ImprovementCandidateRecorded'>[];
  deadLetters: readonly DeadLetterView[];
  evidenceBaseUrl: string | null;
  now: string;
}): CaseDetailView {
  const s = input.state;
  const events = [...input.events].sort((a, b) => a.seq - b.seq);
  const timeline = events.map((e): TimelineEntry => {
    const d = describeEvent(e);
    return {
      seq: e.seq,
      type: e.type,
      producer: e.producer,
      aggregate: e.aggregate,
      occurredAt: e.occurredAt,
      tone: d.tone ?? 'neutral',
      summary: d.summary,
      facts: d.facts ?? [],
      reasons: d.reasons ?? [],
      claims: d.claims ?? null,
    };
  });
  const deliveries = deliveryLines(s, events);
  const sources: SourceThread[] = s.sources.map((x) => ({
    sourceId: x.sourceId,
    channelId: x.channelId,
    threadId: x.threadId,
    messageId: x.messageId,
    reporterId: x.reporterId,
    via: x.via,
    deliveries: deliveries.get(x.sourceId) ?? [],
  }));
  const lastGate = events
    .filter((e): e is RecordedEvent<'GateEvaluated'> => e.type === 'GateEvaluated')
    .at(-1);
  const receipts = events
    .filter((e): e is RecordedEvent<'ReceiptBuilt'> => e.type === 'ReceiptBuilt')
    .map((e): ReceiptView => ({
      receiptId: e.data.receiptId,
      seq: e.seq,
      outcome: e.data.outcome,
      revision: e.data.revision,
      builtAt: e.data.builtAt,
      rendered: safeText(e.data.rendered),
      posted: postedReceipts(events, e.data.receiptId),
      residualRisk: safeText(e.data.residualRisk),
      humanAction: safeText(e.data.humanAction),
      threads: sources.map((src) => {
        const line = src.deliveries.find((d) => d.kind === 'receipt' && d.receiptId === e.data.receiptId);
        return { sourceId: src.sourceId, state: line?.state ?? 'not_routed' };
      }),
    }));
  const findings = events
    .filter((e): e is RecordedEvent<'FindingRecorded'> => e.type === 'FindingRecorded')
    .map((e) => ({
      seq: e.seq,
      findingId: e.data.findingId,
      kind: e.data.kind,
      owner: e.data.owner,
      detail: safeText(e.data.detail),
      occurredAt: e.occurredAt,
    }));
  return {
    kind: 'case',
    generatedAt: input.now,
    summary: {
      caseId: s.caseId,
      title: safeText(s.title),
      status: s.status,
      live: !isTerminal(s.status),
      classification: s.classification,
      owner: s.owner,
      taskId: s.taskId,
      repository: s.repository,
      targetBranch: s.targetBranch,
      revision: s.revision,
      targetHead: s.targetHead,
      branch: s.branch,
      openedAt: s.openedAt,
      updatedAt: s.updatedAt,
      lastSeq: s.lastSeq,
      privacyCategories: s.privacyCategories,
      missing: s.missing,
      decision: s.decision,
    },
    sources,
    timeline,
    gate: lastGate
      ? {
          seq: lastGate.seq,
          complete: lastGate.data.complete,
          outcome: lastGate.data.outcome,
          revision: lastGate.data.revision,
          claims: claimsOf(lastGate),
        }
      : null,
    evidence: evidenceItems(events, input.evidenceBaseUrl),
    checks: checksProgress(events),
    receipts,
    findings,
    candidates: input.candidates.map((e) => ({
      candidateId: e.data.candidateId,
      kind: e.data.kind,
      caseIds: e.data.caseIds,
      summary: safeText(e.data.summary),
      windowStart: e.data.windowStart,
      windowEnd: e.data.windowEnd,
    })),
    deadLetters: [...input.deadLetters],
    waiting: waitingOn(s, events),
  };
}
