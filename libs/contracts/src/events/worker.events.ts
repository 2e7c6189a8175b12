import { z } from 'zod';
import { defineEvent } from '../define-event';
import { checkKind, checkResult, gitRevision, safeId, sha256Hex } from './shared.schemas';

/** The worker owns worktrees, agent attempts, checks and PR-ready branches. Never Discord, never merges. */

export const WorktreePrepared = defineEvent({
  type: 'WorktreePrepared',
  producer: 'worker',
  aggregate: 'case',
  description: 'The case worktree exists at a revision (created, or found again on resume).',
  schema: z.object({
    taskId: safeId,
    worktree: safeId,
    branch: z.string().min(1).max(200),
    baseRevision: gitRevision,
    reused: z.boolean(),
  }),
});

export const TargetRevisionChecked = defineEvent({
  type: 'TargetRevisionChecked',
  producer: 'worker',
  aggregate: 'case',
  description:
    'The recorded revision against the target branch head: on resume, before a receipt is judged, and when the head moves while the case awaits review.',
  schema: z.object({
    taskId: safeId,
    recorded: gitRevision,
    head: gitRevision,
    outcome: z.enum(['same', 'moved', 'conflict']),
    /** After `moved`: the case branch rebased onto `head` (null when there was nothing to rebase or it conflicted). */
    rebasedRevision: gitRevision.nullable().default(null),
  }),
});

export const route = z.object({ name: z.string().min(1).max(100), kind: z.enum(['normal', 'escalation']) });

export const AttemptStarted = defineEvent({
  type: 'AttemptStarted',
  producer: 'worker',
  aggregate: 'case',
  description: 'An agent runtime started on the worktree.',
  schema: z.object({
    taskId: safeId,
    attemptId: safeId,
    attempt: z.number().int().positive(),
    route,
    fromCleanTree: z.boolean(),
  }),
});

/**
 * What the agent runtime itself reported of its usage, as it reported it: Claude Code's JSON result
 * carries a cost and token counts, Codex's JSON events carry token counts only. Null fields were not
 * reported; nothing here is estimated.
 */
export const agentUsage = z.object({
  reportedBy: z.enum(['claude_code', 'codex']),
  costUsd: z.number().nonnegative().nullable(),
  inputTokens: z.number().int().nonnegative().nullable(),
  cachedInputTokens: z.number().int().nonnegative().nullable(),
  outputTokens: z.number().int().nonnegative().nullable(),
});
export type AgentUsage = z.infer<typeof agentUsage>;

export const AttemptFinished = defineEvent({
  type: 'AttemptFinished',
  version: 2,
  producer: 'worker',
  aggregate: 'case',
  description:
    'An attempt ended: its diff, the checks it was judged by and what the runtime reported of its usage.',
  // v2 adds `usage`; a v1 attempt reported nothing.
  upcasters: { 1: (data) => ({ ...(data as object), usage: null }) },
  schema: z.object({
    taskId: safeId,
    attemptId: safeId,
    route,
    durationMs: z.number().int().nonnegative(),
    outcome: z.enum(['changed', 'no_change', 'timeout', 'runtime_error']),
    exitCode: z.number().int().nullable(),
    diffSha256: sha256Hex.nullable(),
    diffBytes: z.number().int().nonnegative(),
    checks: z.array(checkResult),
    firstFailedFocusedCheck: z.string().max(100).nullable(),
    /** The case branch head after this attempt (null only when the worktree was lost). */
    revision: gitRevision.nullable().default(null),
    /** Null when the runtime reports no usage (a plain command, a scripted runtime) or its report was unreadable. */
    usage: agentUsage.nullable().default(null),
  }),
});

export const EscalationUsed = defineEvent({
  type: 'EscalationUsed',
  producer: 'worker',
  aggregate: 'case',
  description: 'The one escalation of this case: two distinct attempts failed the same focused check.',
  schema: z.object({
    taskId: safeId,
    route,
    failedAttemptIds: z.array(safeId).length(2),
    focusedCheck: z.string().min(1).max(100),
  }),
});

/** A few lines of the start and the end of a check's redacted output, for progress and the receipt. */
export const outputExcerpt = z.object({
  head: z.array(z.string().max(300)).max(10),
  tail: z.array(z.string().max(300)).max(10),
  /** Lines between head and tail that are not shown. */
  omittedLines: z.number().int().nonnegative(),
});
export type OutputExcerpt = z.infer<typeof outputExcerpt>;

export const CheckStarted = defineEvent({
  type: 'CheckStarted',
  producer: 'worker',
  aggregate: 'case',
  description: 'One check (or setup step) began on a revision: progress while a long suite runs.',
  schema: z.object({
    taskId: safeId,
    revision: gitRevision,
    name: z.string().min(1).max(100),
    kind: checkKind,
    /** Position in this run (0-based) and how many the run has. */
    index: z.number().int().nonnegative(),
    total: z.number().int().positive(),
    /** The attempt these checks judge; null for a re-run of the checks without an attempt. */
    attemptId: safeId.nullable(),
  }),
});

export const CheckFinished = defineEvent({
  type: 'CheckFinished',
  producer: 'worker',
  aggregate: 'case',
  description:
    'One check ended: its result, an excerpt of its output, and where its whole redacted log is stored.',
  schema: z.object({
    taskId: safeId,
    index: z.number().int().nonnegative(),
    total: z.number().int().positive(),
    attemptId: safeId.nullable(),
    result: checkResult,
    excerpt: outputExcerpt,
    /** The object key of the whole log in the check-log bucket (`checkOutputArtifactPath`); null when nothing was stored. */
    logKey: z.string().min(1).max(1024).nullable(),
  }),
});

export const ChecksCompleted = defineEvent({
  type: 'ChecksCompleted',
  producer: 'worker',
  aggregate: 'case',
  description: "The repository's checks on one revision; every result names that revision.",
  schema: z.object({
    taskId: safeId,
    revision: gitRevision,
    targetHead: gitRevision,
    results: z.array(checkResult).min(1),
    passed: z.boolean(),
  }),
});

export const BranchPushed = defineEvent({
  type: 'BranchPushed',
  producer: 'worker',
  aggregate: 'case',
  description: 'The PR-ready branch `caseloop/<caseId>` at a revision on the remote (idempotent).',
  schema: z.object({
    taskId: safeId,
    branch: z.string().min(1).max(200),
    revision: gitRevision,
    baseRevision: gitRevision,
    created: z.boolean(),
    draftPullRequestUrl: z.string().url().nullable(),
  }),
});

export const blockerKind = z.enum([
  'permissions',
  'signing',
  'fixtures',
  'device',
  'busy_client',
  'conflict',
  'repository_unavailable',
  'worktree_lost',
  'checks_failing',
  'runtime_failed',
  'invalid_input',
  'budget_exhausted',
]);

export const BlockerRaised = defineEvent({
  type: 'BlockerRaised',
  producer: 'worker',
  aggregate: 'case',
  version: 2,
  description: 'The worker cannot go on without a human: what is missing, in words.',
  // v2 adds the kind `budget_exhausted`; v1 data is valid v2 data.
  upcasters: { 1: (data) => data },
  schema: z.object({ taskId: safeId, kind: blockerKind, detail: z.string().min(1).max(2000) }),
});

export const WorktreeRemoved = defineEvent({
  type: 'WorktreeRemoved',
  producer: 'worker',
  aggregate: 'case',
  description: 'The case worktree was removed because the case or its task ended (the pushed branch stays).',
  schema: z.object({
    taskId: safeId,
    worktree: safeId,
    reason: z.enum(['cancelled', 'approved', 'rejected', 'duplicate']),
  }),
});

/**
 * The object key of a check's whole redacted output in the check-log bucket:
 * `checks/<caseId>/<revision>/<outputSha256>.log`. The worker stores it (and reads it back) before
 * `CheckFinished` names the digest; the evidence service reads it from S3 and verifies the digest.
 */
export const checkOutputArtifactPath = (caseId: string, revision: string, outputSha256: string): string => {
  safeId.parse(caseId);
  gitRevision.parse(revision);
  sha256Hex.parse(outputSha256);
  return `checks/${caseId}/${revision}/${outputSha256}.log`;
};

export const workerEvents = [
  WorktreePrepared,
  TargetRevisionChecked,
  AttemptStarted,
  AttemptFinished,
  EscalationUsed,
  CheckStarted,
  CheckFinished,
  ChecksCompleted,
  BranchPushed,
  BlockerRaised,
  WorktreeRemoved,
] as const;
