import { z } from 'zod';
import { defineEvent } from '../define-event';
import { isoTime, producerName, safeId } from './shared.schemas';

/** The monitor watches and steers; it never takes over. */

export const findingKind = z.enum([
  'no_progress',
  'stale_proof',
  'unsupported_status',
  'lease_expired_during_capture',
  'delivery_stuck',
  'dead_letter',
  'missing_gate',
]);

const finding = z.object({
  findingId: safeId,
  kind: findingKind,
  owner: producerName,
  detail: z.string().min(1).max(1000),
  observedSeq: z.number().int().nonnegative(),
});

export const FindingRecorded = defineEvent({
  type: 'FindingRecorded',
  producer: 'monitor',
  aggregate: 'case',
  description: 'A concrete gap addressed to the service that owns the next step.',
  schema: finding,
});

/** The `ops` aggregate id of findings that belong to no case (`OpsFindingRecorded`). */
export const OPS_FINDINGS_AGGREGATE_ID = 'findings';
/** The `ops` aggregate id of improvement candidates: facts about many cases. */
export const IMPROVEMENTS_AGGREGATE_ID = 'improvements';

export const OpsFindingRecorded = defineEvent({
  type: 'OpsFindingRecorded',
  producer: 'monitor',
  aggregate: 'ops',
  description:
    'A concrete gap that belongs to no case (a message on a source or ops subject a projection could not apply), addressed to the service that owns the next step.',
  schema: finding,
});

export const ImprovementCandidateRecorded = defineEvent({
  type: 'ImprovementCandidateRecorded',
  producer: 'monitor',
  aggregate: 'ops',
  description: 'The same kind of gap recurred across cases within a window: for humans to consider.',
  schema: z.object({
    candidateId: safeId,
    kind: findingKind,
    caseIds: z.array(safeId).min(2),
    windowStart: isoTime,
    windowEnd: isoTime,
    summary: z.string().min(1).max(1000),
  }),
});

export const monitorEvents = [FindingRecorded, OpsFindingRecorded, ImprovementCandidateRecorded] as const;
