import { isSafeId, type Producer, type RecordedEvent } from '@caseloop/contracts';
import { CaseStatus, CaseView, foldCase, isTerminal, receiptThreads } from '@caseloop/case-model';

/**
 * The monitor's rules: pure functions over one case's events and the time of the look.
 * They name a gap and the service that owns the next step; they never take the step.
 */
export type FindingKind =
  | 'no_progress'
  | 'stale_proof'
  | 'unsupported_status'
  | 'lease_expired_during_capture'
  | 'delivery_stuck'
  | 'dead_letter'
  | 'missing_gate';

export interface Finding {
  kind: FindingKind;
  owner: Producer;
  detail: string;
  /**
   * The ledger sequence the finding was observed at: the same gap at the same sequence is one
   * finding. For a dead letter, the sequence of the message that could not be handled.
   */
  observedSeq: number;
  /** For a dead letter, the consumer that gave up: the same message dead-lettered by two consumers is two findings. */
  consumer?: string;
}

/**
 * A finding's id (also the command id it is appended under): one gap is recorded once, whatever
 * the case does next and however often the monitor looks (a restart reads every dead letter again).
 */
export function findingId(caseId: string, f: Finding): string {
  const id = `finding-${caseId}-${f.kind}-${f.observedSeq}`;
  if (f.consumer === undefined) return id;
  // Consumer names are NATS names; an id is a safe id (no dots, at most 128 characters).
  return `${id}-${f.consumer.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 128);
}

export interface MonitorPolicy {
  /** How long a case may sit in a status without a new event before it is "no progress" (ms). */
  stepBudgetMs: Partial<Record<CaseStatus, number>>;
  /** How long a delivery may stay intended (or requested) without an outcome (ms). */
  deliveryStuckMs: number;
}

export const DEFAULT_POLICY: MonitorPolicy = {
  stepBudgetMs: {
    received: 10 * 60_000,
    triage: 30 * 60_000,
    actionable: 30 * 60_000,
    in_progress: 2 * 3_600_000,
    validating: 60 * 60_000,
    stale: 30 * 60_000,
    revision_requested: 30 * 60_000,
    pr_ready: 30 * 60_000,
    implemented_client_blocked: 30 * 60_000,
  },
  deliveryStuckMs: 10 * 60_000,
};

/** Who owns the next autonomous step in each status; humans own the rest (no finding). */
const OWNER_BY_STATUS: Partial<Record<CaseStatus, Producer>> = {
  received: 'coordinator',
  triage: 'coordinator',
  actionable: 'coordinator',
  in_progress: 'worker',
  validating: 'evidence',
  stale: 'coordinator',
  revision_requested: 'coordinator',
  pr_ready: 'coordinator',
  implemented_client_blocked: 'coordinator',
};

export interface DeadLetterRef {
  seq: number;
  consumer: string;
  owner: Producer;
  reason: string;
}

export function detectFindings(
  events: readonly RecordedEvent[],
  now: Date,
  policy: MonitorPolicy = DEFAULT_POLICY,
  deadLetters: readonly DeadLetterRef[] = [],
): Finding[] {
  const state = foldCase(events);
  if (state.status === 'none') return [];
  const findings: Finding[] = [];
  // The monitor's own findings are not progress: idle time and the observed sequence ignore them,
  // so a recorded finding does not make the same gap look new at the next look.
  const last = lastOwnerEvent(events);
  if (!last) return [];
  const at = last.seq;

  if (!isTerminal(state.status)) {
    const budget = policy.stepBudgetMs[state.status];
    const owner = OWNER_BY_STATUS[state.status];
    const idleMs = now.getTime() - Date.parse(last.occurredAt);
    if (budget !== undefined && owner && idleMs > budget) {
      findings.push({
        kind: 'no_progress',
        owner,
        detail: `no event for ${Math.round(idleMs / 60_000)} min in status ${state.status} (budget ${Math.round(budget / 60_000)} min); last was ${state.lastEventType}`,
        observedSeq: at,
      });
    }
  }

  const stale = staleProof(events);
  if (stale && state.status !== 'stale' && !isTerminal(state.status)) {
    findings.push({ kind: 'stale_proof', owner: 'coordinator', detail: stale, observedSeq: at });
  }

  const unsupported = unsupportedStatus(state, events);
  if (unsupported)
    findings.push({ kind: 'unsupported_status', owner: 'coordinator', detail: unsupported, observedSeq: at });

  const gate = missingGate(state, events);
  if (gate) findings.push({ kind: 'missing_gate', owner: 'coordinator', detail: gate, observedSeq: at });

  const lease = leaseExpiredDuringCapture(events);
  if (lease)
    findings.push({
      kind: 'lease_expired_during_capture',
      owner: 'evidence',
      detail: lease,
      observedSeq: at,
    });

  const stuck = stuckDeliveries(events, now, policy.deliveryStuckMs);
  if (stuck) findings.push({ kind: 'delivery_stuck', owner: 'intake', detail: stuck, observedSeq: at });

  // A dead letter is observed at its message, not at the case's last event: a later letter on a
  // case that has not moved is a new finding, and two letters found at one look are two.
  for (const dl of deadLetters) {
    findings.push({
      kind: 'dead_letter',
      owner: dl.owner,
      detail: `stream seq ${dl.seq} dead-lettered by ${dl.consumer}: ${dl.reason}`.slice(0, 1000),
      observedSeq: dl.seq,
      consumer: dl.consumer,
    });
  }
  return findings;
}

/** A row of `projection_dead_letters` of a projection's active version (never its body). */
export interface ProjectionDeadLetterRef {
  projection: string;
  version: number;
  seq: number;
  subject: string;
  code: string;
  error: string;
}

export interface ProjectionDeadLetterFinding {
  /** The case the message was on (a `<ns>.case.<id>.<producer>` subject), or the ops aggregate. */
  target: { aggregate: 'case'; caseId: string } | { aggregate: 'ops' };
  findingId: string;
  finding: Finding;
}

/**
 * A message a projection could not apply: the read model lacks it until it is re-driven or the
 * projection rebuilt, which the monitor (the host of the projection runners, i.e. ops) owns. It is
 * recorded on its case when it was on a case subject, else on the ops aggregate. Observed at the
 * message and named by the projection and version: the same message dead-lettered again by a later
 * version (a rebuild that still cannot read it) is a new finding.
 */
export function projectionDeadLetterFinding(dl: ProjectionDeadLetterRef): ProjectionDeadLetterFinding {
  const [, aggregate, id] = dl.subject.split('.');
  const target =
    aggregate === 'case' && isSafeId(id)
      ? ({ aggregate: 'case', caseId: id } as const)
      : ({ aggregate: 'ops' } as const);
  const finding: Finding = {
    kind: 'dead_letter',
    owner: 'monitor',
    detail: projectionDeadLetterDetail(dl),
    observedSeq: dl.seq,
    consumer: `projection-${dl.projection}-v${dl.version}`,
  };
  return {
    target,
    findingId: findingId(target.aggregate === 'case' ? target.caseId : 'ops', finding),
    finding,
  };
}

function projectionDeadLetterDetail(dl: ProjectionDeadLetterRef): string {
  const where = `projection ${dl.projection} v${dl.version} could not apply stream seq ${dl.seq} (${dl.subject.slice(0, 160)})`;
  const what = `${dl.code.slice(0, 40)}: ${boundedError(dl.error)}`;
  const todo =
    `the read model lacks this event until it is applied: \`caseloop dead-letters\` lists it; ` +
    `upgrade the reader, then \`caseloop dead-letters --redrive ${dl.seq}\`; ` +
    `many of them: \`caseloop rebuild ${dl.projection}\``;
  return `${where}: ${what}; ${todo}`.slice(0, 1000);
}

/**
 * The decoder's reason, without the message body: JSON.parse quotes the start of the text it could
 * not read (`Unexpected token 'o', "not json" is not valid JSON`), which is cut out; at most 240 characters.
 */
function boundedError(error: string): string {
  const text = error
    .replace(/(Unexpected token '[^']{0,8}'), [\s\S]* is not valid JSON/, '$1 (body not shown)')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > 240 ? `${text.slice(0, 239)}…` : text || '(no reason given)';
}

const lastOwnerEvent = (events: readonly RecordedEvent[]): RecordedEvent | undefined =>
  [...events].reverse().find((e) => e.producer !== 'monitor');

/**
 * When a case that has not changed must be looked at again: when its step budget runs out, or
 * when an open delivery intent becomes stuck. Null when only a new event can reveal a gap.
 */
export function nextRecheckAt(
  events: readonly RecordedEvent[],
  now: Date,
  policy: MonitorPolicy = DEFAULT_POLICY,
): number | null {
  const state = foldCase(events);
  const last = lastOwnerEvent(events);
  if (state.status === 'none' || !last || isTerminal(state.status)) return null;
  const times: number[] = [];
  const budget = policy.stepBudgetMs[state.status];
  if (budget !== undefined && OWNER_BY_STATUS[state.status])
    times.push(Date.parse(last.occurredAt) + budget + 1);
  const open = new Map<string, number>();
  for (const e of events) {
    const key =
      'deliveryId' in e.data && 'chunkIndex' in e.data
        ? `${e.data.deliveryId}#${String(e.data.chunkIndex)}`
        : null;
    if (e.type === 'DeliveryIntended' && key) open.set(key, Date.parse(e.occurredAt));
    if ((e.type === 'DeliveryConfirmed' || e.type === 'DeliveryRefused') && key) open.delete(key);
  }
  for (const since of open.values()) times.push(since + policy.deliveryStuckMs + 1);
  // A deadline already passed was judged at this look; only a change can make it material again.
  const ahead = times.filter((t) => t > now.getTime());
  return ahead.length ? Math.min(...ahead) : null;
}

/** The newest proof (a complete gate) was made against a target head older than one seen after it. */
function staleProof(events: readonly RecordedEvent[]): string | null {
  // The proven revision is the case branch; what can go stale is the target head it was proven on.
  let proven: { revision: string; targetHead: string; seq: number } | null = null;
  let head: { revision: string; seq: number } | null = null;
  for (const e of events) {
    if (e.type === 'GateEvaluated' && e.data.complete)
      proven = { revision: e.data.revision, targetHead: e.data.targetHead, seq: e.seq };
    if (e.type === 'ChecksCompleted') head = { revision: e.data.targetHead, seq: e.seq };
    if (e.type === 'TargetRevisionChecked') head = { revision: e.data.head, seq: e.seq };
    if (e.type === 'GateEvaluated') head = { revision: e.data.targetHead, seq: e.seq };
    if (e.type === 'ProofMarkedStale' || e.type === 'TaskResumed') proven = null;
  }
  if (proven && head && head.seq > proven.seq && head.revision !== proven.targetHead) {
    return `proof on ${proven.revision.slice(0, 12)} (target ${proven.targetHead.slice(0, 12)}) but the target head is ${head.revision.slice(0, 12)}`;
  }
  return null;
}

function unsupportedStatus(state: CaseView, events: readonly RecordedEvent[]): string | null {
  if (state.status !== 'awaiting_review') return null;
  const receiptId = state.latestReceiptId;
  if (!receiptId) return 'awaiting_review without a receipt';
  const receiptDeliveries = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'DeliveryRequested' && e.data.receiptId === receiptId)
      receiptDeliveries.set(e.data.deliveryId, e.data.sourceId);
  }
  const confirmed = new Set<string>();
  for (const e of events) {
    if (e.type === 'DeliveryConfirmed' && receiptDeliveries.has(e.data.deliveryId))
      confirmed.add(e.data.sourceId);
  }
  // A receipt goes once per Discord thread (to the thread's first source), not once per reply in it.
  const missing = receiptThreads(state)
    .map((s) => s.sourceId)
    .filter((s) => !confirmed.has(s));
  return missing.length ? `awaiting_review but the receipt is not confirmed at ${missing.join(', ')}` : null;
}

const GATED: readonly CaseStatus[] = [
  'pr_ready',
  'implemented_client_blocked',
  'awaiting_review',
  'approved',
];

function missingGate(state: CaseView, events: readonly RecordedEvent[]): string | null {
  if (!GATED.includes(state.status)) return null;
  const gate = [...events].reverse().find((e) => e.type === 'GateEvaluated');
  if (!gate || gate.type !== 'GateEvaluated' || !gate.data.complete)
    return `status ${state.status} without a complete gate`;
  return null;
}

function leaseExpiredDuringCapture(events: readonly RecordedEvent[]): string | null {
  const expired = new Map<number, number>();
  for (const e of events) {
    if (e.type === 'LeaseExpired') expired.set(e.data.token, Date.parse(e.data.expiredAt));
  }
  for (const e of events) {
    if (e.type !== 'CaptureTaken') continue;
    const expiredAt = expired.get(e.data.leaseToken);
    if (expiredAt !== undefined && Date.parse(e.data.takenAt) >= expiredAt) {
      const voided = events.some((v) => v.type === 'CaptureVoided' && v.data.captureId === e.data.captureId);
      if (!voided)
        return `capture ${e.data.captureId} was taken after lease ${e.data.leaseToken} expired and is not voided`;
    }
  }
  return null;
}

function stuckDeliveries(events: readonly RecordedEvent[], now: Date, limitMs: number): string | null {
  const open = new Map<string, { since: number; what: string }>();
  const key = (d: { deliveryId: string; chunkIndex: number }) => `${d.deliveryId}#${d.chunkIndex}`;
  for (const e of events) {
    if (e.type === 'DeliveryIntended')
      open.set(key(e.data), { since: Date.parse(e.occurredAt), what: 'intended' });
    if (e.type === 'DeliveryConfirmed' || e.type === 'DeliveryRefused') open.delete(key(e.data));
  }
  const stuck = [...open.entries()].filter(([, v]) => now.getTime() - v.since > limitMs).map(([k]) => k);
  return stuck.length ? `delivery chunks stuck in intent: ${stuck.join(', ')}` : null;
}

/**
 * The same kind of gap in at least `minCases` distinct cases within the window becomes an
 * improvement candidate for humans. Never a rule change.
 */
export function improvementCandidates(
  recent: readonly { caseId: string; kind: FindingKind; at: string }[],
  window: { start: Date; end: Date },
  minCases = 3,
): { kind: FindingKind; caseIds: string[] }[] {
  const byKind = new Map<FindingKind, Set<string>>();
  for (const f of recent) {
    const t = Date.parse(f.at);
    if (t < window.start.getTime() || t > window.end.getTime()) continue;
    const set = byKind.get(f.kind) ?? new Set<string>();
    set.add(f.caseId);
    byKind.set(f.kind, set);
  }
  return [...byKind.entries()]
    .filter(([, ids]) => ids.size >= minCases)
    .map(([kind, ids]) => ({ kind, caseIds: [...ids].sort() }));
}
