import { z } from 'zod';
import { defineEvent } from '../define-event';
import {
  caseOutcome,
  checkResult,
  clientOutcome,
  gitRevision,
  isoTime,
  safeId,
  sha256Hex,
} from './shared.schemas';
import { resourceName } from './lease.events';

/** Client validation in a real browser, privacy review, durable storage and the receipt. */

export const ClientValidationStarted = defineEvent({
  type: 'ClientValidationStarted',
  producer: 'evidence',
  aggregate: 'case',
  description:
    'The client phase for a revision began (its lease, app and browser are accounted for in ClientValidationCompleted).',
  schema: z.object({
    taskId: safeId,
    revision: gitRevision,
    flow: z.string().min(1).max(100),
    resource: resourceName,
  }),
});

export const CaptureTaken = defineEvent({
  type: 'CaptureTaken',
  producer: 'evidence',
  aggregate: 'case',
  description: 'A screenshot taken under a live lease, of a verified page, tagged for provenance.',
  schema: z.object({
    taskId: safeId,
    revision: gitRevision,
    captureId: safeId,
    resource: resourceName,
    leaseToken: z.number().int().positive(),
    step: z.string().max(200),
    page: z.object({ url: z.string().max(2048), title: z.string().max(500) }),
    sha256: sha256Hex,
    takenAt: isoTime,
  }),
});

export const CaptureVoided = defineEvent({
  type: 'CaptureVoided',
  producer: 'evidence',
  aggregate: 'case',
  description: 'A capture that is not evidence: its lease expired or was foreign when it was taken.',
  schema: z.object({ captureId: safeId, reason: z.enum(['lease_expired', 'lease_foreign', 'wrong_page']) }),
});

export const ClientValidationCompleted = defineEvent({
  type: 'ClientValidationCompleted',
  producer: 'evidence',
  aggregate: 'case',
  description: 'The client claim: passed, failed (with its screenshot) or blocked (with the reason).',
  schema: z.object({
    taskId: safeId,
    revision: gitRevision,
    outcome: clientOutcome,
    reason: z.string().max(1000).nullable(),
    captureIds: z.array(safeId),
  }),
});

export const artifactKind = z.enum(['screenshot', 'trace', 'check_log', 'diff', 'receipt']);

export const ArtifactReviewed = defineEvent({
  type: 'ArtifactReviewed',
  producer: 'evidence',
  aggregate: 'case',
  description: 'Privacy review of one artifact before storage: cleared, redacted, or waiting for a human.',
  schema: z.object({
    artifactId: safeId,
    kind: artifactKind,
    sha256: sha256Hex,
    decision: z.enum(['cleared', 'redacted', 'needs_human', 'rejected']),
    redactions: z.array(z.object({ category: z.string().max(50), count: z.number().int().positive() })),
    basis: z.string().max(300),
  }),
});

export const ArtifactStored = defineEvent({
  type: 'ArtifactStored',
  producer: 'evidence',
  aggregate: 'case',
  description: 'Written to S3, read back and its sha-256 verified — only then is it durable evidence.',
  schema: z.object({
    artifactId: safeId,
    kind: artifactKind,
    key: z.string().min(1).max(1024),
    sha256: sha256Hex,
    bytes: z.number().int().nonnegative(),
    contentType: z.string().max(255),
    revision: gitRevision,
    captureId: safeId.nullable(),
    leaseToken: z.number().int().positive().nullable(),
  }),
});

export const ArtifactDurabilityFailed = defineEvent({
  type: 'ArtifactDurabilityFailed',
  producer: 'evidence',
  aggregate: 'case',
  description: 'The read-back did not match what was written: not evidence.',
  schema: z.object({
    artifactId: safeId,
    key: z.string().max(1024),
    expected: sha256Hex,
    actual: sha256Hex.nullable(),
  }),
});

/** One attempt as the receipt reports it: which check it failed, what its runtime reported. */
export const receiptAttempt = z.object({
  attempt: z.number().int().positive(),
  route: z.string().max(100),
  kind: z.enum(['normal', 'escalation']),
  /** `passed`: its checks passed; `failed`: a check failed (`failedCheck`); otherwise the attempt's own outcome. */
  result: z.enum(['passed', 'failed', 'no_change', 'timeout', 'runtime_error', 'unfinished']),
  failedCheck: z.string().max(100).nullable(),
  durationMs: z.number().int().nonnegative().nullable(),
  costUsd: z.number().nonnegative().nullable(),
  inputTokens: z.number().int().nonnegative().nullable(),
  outputTokens: z.number().int().nonnegative().nullable(),
});

export const receiptStage = z.object({
  stage: z.enum(['report_to_task', 'worktree', 'agent', 'checks', 'proof', 'total']),
  ms: z.number().int().nonnegative(),
});

export const ReceiptBuilt = defineEvent({
  type: 'ReceiptBuilt',
  version: 2,
  producer: 'evidence',
  aggregate: 'case',
  description: 'The structured receipt, from ledger events only, rendered for Discord.',
  // v2 adds the attempts, the escalation, the time per stage and the reported agent usage.
  upcasters: { 1: (data) => ({ attempts: [], escalation: null, stages: [], ...(data as object) }) },
  schema: z.object({
    receiptId: safeId,
    taskId: safeId,
    revision: gitRevision,
    outcome: caseOutcome,
    checks: z.array(checkResult),
    client: z.object({
      flow: z.string().max(100).nullable(),
      /** `not_declared`: the repository configures no client, so there was none to exercise. */
      outcome: z.union([clientOutcome, z.literal('not_declared')]),
      captureIds: z.array(safeId),
    }),
    evidence: z.array(
      z.object({
        key: z.string().max(1024),
        sha256: sha256Hex,
        kind: artifactKind,
        /** False while a screenshot waits for a reviewer's privacy approval: listed, never linked. */
        shareable: z.boolean().default(true),
      }),
    ),
    residualRisk: z.string().max(2000),
    humanAction: z.string().max(500),
    /** Every attempt of the task, oldest first (earlier failures included). */
    attempts: z.array(receiptAttempt).max(50).optional(),
    escalation: z
      .object({
        route: z.string().max(100),
        focusedCheck: z.string().max(100),
        afterAttempts: z.array(z.number().int().positive()),
      })
      .nullable()
      .optional(),
    /** Elapsed wall-clock time per stage, from the events' times and the attempts' and checks' durations. */
    stages: z.array(receiptStage).max(10).optional(),
    rendered: z.string().min(1).max(12_000),
    builtAt: isoTime,
  }),
});

export const evidenceEvents = [
  ClientValidationStarted,
  CaptureTaken,
  CaptureVoided,
  ClientValidationCompleted,
  ArtifactReviewed,
  ArtifactStored,
  ArtifactDurabilityFailed,
  ReceiptBuilt,
] as const;
