import { z } from 'zod';
import { defineEvent } from '../define-event';
import { checkResult, gitRevision, safeId, sha256Hex } from './shared.schemas';

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

export const AttemptFinished = defineEvent({
  type: 'AttemptFinished',
  producer: 'worker',
  aggregate: 'case',
  description: 'An attempt ended: its diff and the checks it was judged by.',
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
]);

export const BlockerRaised = defineEvent({
  type: 'BlockerRaised',
  producer: 'worker',
  aggregate: 'case',
  description: 'The worker cannot go on without a human: what is missing, in words.',
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
 * Where a check's redacted, truncated output lives, relative to the shared artifacts directory:
 * `checks/<caseId>/<revision>/<outputSha256>.log`. The worker writes it before `ChecksCompleted`
 * names the digest; the evidence service reads it from there and verifies the digest.
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
  ChecksCompleted,
  BranchPushed,
  BlockerRaised,
  WorktreeRemoved,
] as const;
