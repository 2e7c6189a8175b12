/**
 * Which live cases the heartbeat reads deeply. Pure: the projection gives the live set, the
 * monitor's memory of its last looks gives what changed. A case is read when it is new to the
 * monitor, changed since the last look (by ledger sequence), due for a time-based re-check
 * (a step budget or a delivery running out), or has a dead letter the monitor has not reported.
 */
export interface LiveCase {
  caseId: string;
  status: string;
  lastSeq: number;
}

export interface Look {
  /** The case's last sequence when the monitor last read it (including its own findings). */
  lastSeq: number;
  /** When an unchanged case must be read again; null when only a change can reveal a gap. */
  recheckAt: number | null;
}

export type DeepReadReason = 'new' | 'changed' | 'recheck_due' | 'dead_letter';

export function selectForDeepRead(
  live: readonly LiveCase[],
  looks: ReadonlyMap<string, Look>,
  now: number,
  unreportedDeadLetterCases: ReadonlySet<string> = new Set(),
): { caseId: string; reason: DeepReadReason }[] {
  const out: { caseId: string; reason: DeepReadReason }[] = [];
  for (const c of live) {
    const look = looks.get(c.caseId);
    if (!look) out.push({ caseId: c.caseId, reason: 'new' });
    else if (c.lastSeq > look.lastSeq) out.push({ caseId: c.caseId, reason: 'changed' });
    else if (look.recheckAt !== null && now >= look.recheckAt)
      out.push({ caseId: c.caseId, reason: 'recheck_due' });
    else if (unreportedDeadLetterCases.has(c.caseId)) out.push({ caseId: c.caseId, reason: 'dead_letter' });
  }
  return out;
}
