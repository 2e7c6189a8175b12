import type { RecordedEvent } from '@caseloop/contracts';
import type { Described } from './case-detail.types';
import { list, safeText, short } from './view-text';

/** The events of the work on a case (worktree, attempts, checks, leases, captures, evidence, monitor). */
export type WorkEvent = RecordedEvent<
  | 'WorktreePrepared'
  | 'TargetRevisionChecked'
  | 'AttemptStarted'
  | 'AttemptFinished'
  | 'EscalationUsed'
  | 'CheckStarted'
  | 'CheckFinished'
  | 'ChecksCompleted'
  | 'BranchPushed'
  | 'BlockerRaised'
  | 'WorktreeRemoved'
  | 'LeaseRequested'
  | 'LeaseGranted'
  | 'LeaseRenewed'
  | 'LeaseReleased'
  | 'LeaseExpired'
  | 'LeaseRefused'
  | 'ClientValidationStarted'
  | 'CaptureTaken'
  | 'CaptureVoided'
  | 'ClientValidationCompleted'
  | 'ArtifactReviewed'
  | 'ArtifactStored'
  | 'ArtifactDurabilityFailed'
  | 'ReceiptBuilt'
  | 'FindingRecorded'
  | 'OpsFindingRecorded'
  | 'ImprovementCandidateRecorded'
>;

export function describeWorkEvent(e: WorkEvent): Described {
  switch (e.type) {
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
