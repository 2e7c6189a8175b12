import { z } from 'zod';
import { defineEvent } from '../define-event';
import {
  caseOutcome,
  classification,
  discordPlace,
  gitRevision,
  isoTime,
  safeId,
  snowflake,
} from './shared.schemas';

/** The coordinator decides what a report is and where the case goes. It never touches code. */

const linkedSource = {
  sourceId: safeId,
  place: discordPlace,
  reporterId: snowflake,
};

export const CaseOpened = defineEvent({
  type: 'CaseOpened',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'A new case, opened from its first source.',
  schema: z.object({
    ...linkedSource,
    title: z.string().min(1).max(200),
    confidence: z.number().min(0).max(1),
    reasons: z.array(z.string().max(300)).max(20),
  }),
});

export const SourceLinked = defineEvent({
  type: 'SourceLinked',
  producer: 'coordinator',
  aggregate: 'case',
  description:
    'A further source joined this case: high-confidence match, a settled link review, or a thread reply.',
  schema: z.object({
    ...linkedSource,
    via: z.enum(['semantic_match', 'link_review', 'thread']),
    confidence: z.number().min(0).max(1),
    reasons: z.array(z.string().max(300)).max(20),
  }),
});

export const LinkReviewRequested = defineEvent({
  type: 'LinkReviewRequested',
  producer: 'coordinator',
  aggregate: 'case',
  description:
    'A medium-confidence match: the report is held on the candidate case until a human settles it.',
  schema: z.object({
    ...linkedSource,
    reviewId: safeId,
    confidence: z.number().min(0).max(1),
    reasons: z.array(z.string().max(300)).max(20),
  }),
});

export const CaseClassified = defineEvent({
  type: 'CaseClassified',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'Triage: what kind of report this is, by rules (or an optional classifier), with its reasons.',
  schema: z.object({
    classification,
    confidence: z.number().min(0).max(1),
    reasons: z.array(z.string().max(300)).max(20),
    by: z.enum(['rules', 'classifier']),
  }),
});

export const readinessField = z.enum([
  'environment',
  'expected',
  'actual',
  'impact',
  'evidence',
  'privacy_scope',
  'owner',
]);

export const ClarificationRequested = defineEvent({
  type: 'ClarificationRequested',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'The case is not actionable yet: one clear question goes to the reporter in the thread.',
  schema: z.object({ missing: z.array(readinessField).min(1), question: z.string().min(1).max(1000) }),
});

export const ClarificationHandedOff = defineEvent({
  type: 'ClarificationHandedOff',
  producer: 'coordinator',
  aggregate: 'case',
  description:
    'Two rounds of questions brought nothing new: instead of asking again, the case goes to a reviewer with what is known (a reviewer can make it actionable).',
  schema: z.object({
    missing: z.array(readinessField).min(1),
    known: z.array(z.string().min(1).max(300)).max(20),
    rounds: z.number().int().min(0).max(100),
  }),
});

/** The aspects of a report a readiness judgement route is asked about (steps count as evidence). */
export const readinessAspect = z.enum(['environment', 'expected', 'actual', 'steps', 'impact', 'evidence']);

export const ReadinessJudged = defineEvent({
  type: 'ReadinessJudged',
  producer: 'coordinator',
  aggregate: 'case',
  description:
    "A readiness judgement route's answer about the case's conversation (sanitized brief and attachment names only): which aspects it supplies and which it lacks, recorded with the decision it informed so audit and replay never ask the model again. `fallback`: no usable answer, the offline rules decided.",
  schema: z.object({
    /** `kind:model@name` of the route: what answered, never how to reach it. */
    route: z.string().max(200),
    /** Hash of the exact prompt; the same conversation asks the same question. */
    promptHash: z.string().max(100),
    supplied: z.array(readinessAspect).max(6),
    missing: z.array(readinessAspect).max(6),
    rationale: z.string().max(600),
    fallback: z
      .object({ reason: z.enum(['timeout', 'error', 'invalid_answer']), detail: z.string().max(300) })
      .nullable(),
    durationMs: z.number().min(0),
  }),
});

export const ReadinessConfirmed = defineEvent({
  type: 'ReadinessConfirmed',
  producer: 'coordinator',
  aggregate: 'case',
  description:
    'Environment, expected and actual behaviour, impact, evidence, privacy scope and owner are clear.',
  schema: z.object({ owner: z.string().min(1).max(100), repository: safeId }),
});

export const PrivacyScopeSet = defineEvent({
  type: 'PrivacyScopeSet',
  producer: 'coordinator',
  aggregate: 'case',
  description:
    'What is private in the case (categories and counts only) and the sanitized brief a coding task gets.',
  schema: z.object({
    categories: z.array(z.string().max(50)).max(20),
    redactions: z.number().int().nonnegative(),
    sanitizedBrief: z.string().min(1).max(8000),
  }),
});

export const TaskAssigned = defineEvent({
  type: 'TaskAssigned',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'The one persistent coding task of this case, bound to a repository and its target revision.',
  schema: z.object({
    taskId: safeId,
    repository: safeId,
    targetBranch: z.string().min(1).max(200),
    targetRevision: gitRevision.nullable(),
    brief: z.string().min(1).max(8000),
  }),
});

export const TaskResumed = defineEvent({
  type: 'TaskResumed',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'The same task goes on: after a revision request, a stale proof or a restart.',
  schema: z.object({
    taskId: safeId,
    reason: z.enum(['revision_requested', 'stale_proof', 'worker_restart', 'finding', 'made_actionable']),
    note: z.string().max(4000).nullable(),
  }),
});

export const TaskCancelled = defineEvent({
  type: 'TaskCancelled',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'The task stops for good (rejected, duplicate).',
  schema: z.object({ taskId: safeId, reason: z.string().min(1).max(500) }),
});

export const deliveryKind = z.enum([
  'ack',
  'linked',
  'question',
  'blocker',
  'receipt',
  'notice',
  'link_review',
  'privacy_approval',
  'decision',
]);

export const DeliveryRequested = defineEvent({
  type: 'DeliveryRequested',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'A post the outbox must make in one source thread. Content is already privacy-safe.',
  schema: z.object({
    deliveryId: safeId,
    sourceId: safeId,
    kind: deliveryKind,
    place: discordPlace,
    content: z.string().min(1).max(12_000),
    receiptId: safeId.nullable(),
  }),
});

const claim = z.object({ ok: z.boolean(), detail: z.string().max(500) });

export const GateEvaluated = defineEvent({
  type: 'GateEvaluated',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'The completion gate: four independent claims, each with its verdict.',
  schema: z.object({
    taskId: safeId,
    revision: gitRevision,
    targetHead: gitRevision,
    claims: z.object({ checks: claim, revision: claim, client: claim, evidence: claim }),
    complete: z.boolean(),
    outcome: caseOutcome.nullable(),
  }),
});

export const ProofMarkedStale = defineEvent({
  type: 'ProofMarkedStale',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'The target branch moved after a passing run: the old proof is historical only.',
  schema: z.object({ taskId: safeId, provenRevision: gitRevision, targetHead: gitRevision }),
});

export const CaseAwaitingReview = defineEvent({
  type: 'CaseAwaitingReview',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'Every linked source confirmed the receipt; a human decides now.',
  schema: z.object({ receiptId: safeId, confirmedSources: z.array(safeId).min(1) }),
});

export const CaseApproved = defineEvent({
  type: 'CaseApproved',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'A reviewer approved. Nothing is merged: the PR-ready branch waits for a human.',
  schema: z.object({
    reviewerId: snowflake,
    branch: z.string().max(200).nullable(),
    revision: gitRevision.nullable(),
  }),
});

export const RevisionRequested = defineEvent({
  type: 'RevisionRequested',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'A reviewer asked for a revision; the same task resumes with the text.',
  schema: z.object({ reviewerId: snowflake, text: z.string().min(1).max(4000) }),
});

export const CaseRejected = defineEvent({
  type: 'CaseRejected',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'A reviewer rejected the result.',
  schema: z.object({ reviewerId: snowflake, reason: z.string().max(4000).nullable() }),
});

export const CaseMarkedDuplicate = defineEvent({
  type: 'CaseMarkedDuplicate',
  producer: 'coordinator',
  aggregate: 'case',
  description: 'A settled link review folded this case into another one.',
  schema: z.object({ intoCaseId: safeId, reviewerId: snowflake.nullable() }),
});

export const SourceRouted = defineEvent({
  type: 'SourceRouted',
  producer: 'coordinator',
  aggregate: 'source',
  description:
    "The coordinator's one identity decision for a source, recorded on the source itself (first coordinator event of its subject): opened a case, joined one, held for a link review, belongs to a thread, or was already known.",
  // v2 adds the model's judgement on a review-band match (null when no judgement route was asked).
  version: 2,
  upcasters: { 1: (data) => ({ judgement: null, ...(data as object) }) },
  schema: z.object({
    sourceId: safeId,
    caseId: safeId,
    outcome: z.enum(['opened', 'linked', 'held', 'thread']),
    confidence: z.number().min(0).max(1),
    matchedWith: safeId.nullable(),
    reasons: z.array(z.string().max(300)).max(20),
    /**
     * What a judgement route answered, so audit and replay never call the model again: the route
     * label, the hash of the exact prompt, the verdict and rationale; `fallback` when it did not
     * answer usably and the offline decision stood.
     */
    judgement: z
      .object({
        route: z.string().max(200),
        promptHash: z.string().max(100),
        verdict: z.enum(['same', 'different', 'unsure']),
        caseId: safeId.nullable(),
        rationale: z.string().max(600),
        fallback: z
          .object({ reason: z.enum(['timeout', 'error', 'invalid_answer']), detail: z.string().max(300) })
          .nullable(),
        durationMs: z.number().min(0),
      })
      .nullable()
      .default(null),
  }),
});

export const ClockTicked = defineEvent({
  type: 'ClockTicked',
  producer: 'coordinator',
  aggregate: 'ops',
  description: 'The scheduling clock woke: intake fetches the Discord delta, open cases are re-examined.',
  schema: z.object({ tickId: safeId, at: isoTime, deltaRequestId: safeId }),
});

export const coordinatorEvents = [
  CaseOpened,
  SourceLinked,
  LinkReviewRequested,
  CaseClassified,
  ClarificationRequested,
  ReadinessConfirmed,
  PrivacyScopeSet,
  TaskAssigned,
  TaskResumed,
  TaskCancelled,
  DeliveryRequested,
  GateEvaluated,
  ProofMarkedStale,
  CaseAwaitingReview,
  CaseApproved,
  RevisionRequested,
  CaseRejected,
  CaseMarkedDuplicate,
  SourceRouted,
  ClockTicked,
  ClarificationHandedOff,
  ReadinessJudged,
] as const;
