import type { RecordedEvent } from '@caseloop/contracts';
import { safeText } from './view-text';

/** `/findings`: the findings that belong to no case. */

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
