import { AskedBefore } from '../../triage/dialogue.rules';
import { CaseView, evolveCase, initialCaseState } from '@caseloop/case-model';
import { CheckResult, EventData, EventDraft, RecordedEvent } from '@caseloop/contracts';

/** One check run of a task, as the gate judges it. */
export interface RunFact {
  taskId: string;
  revision: string;
  targetHead: string;
  passed: boolean;
  results: CheckResult[];
}

export interface ClientRunFact {
  revision: string;
  outcome: EventData<'ClientValidationCompleted'>['outcome'];
  reason: string | null;
  captures: number;
}

export interface StoredFact {
  artifactId: string;
  sha256: string;
  key: string;
  revision: string;
  seq: number;
}

export interface ReceiptFact {
  seq: number;
  data: EventData<'ReceiptBuilt'>;
}

/**
 * What the coordinator's rules need beyond the shared case view, kept by the same fold so that
 * no rule rescans the events: the proof the completion gate weighs, the receipts and verdicts
 * review depends on, and the few "what happened last" facts dispatch asks about.
 */
export interface RuleFacts {
  /** The last recorded privacy scope (a new one is recorded only when it changed). */
  lastScope: { brief: string; categories: string[] } | null;
  /** Something arrived (a source, a human's word) since the last clarification question. */
  mayAsk: boolean;
  /** The clarification questions sent, oldest first (what each one asked for, its exact words). */
  asked: AskedBefore[];
  /** The dialogue handed the case to a reviewer: no further questions. */
  handedOff: boolean;
  /** Readiness judgements recorded on the case, oldest first: the same prompt is never asked twice. */
  readinessJudged: EventData<'ReadinessJudged'>[];
  /** The latest sign of the task being worked on: a worker event, the assignment or a resume. */
  taskActivity: { at: string; type: string } | null;
  /** Target heads the worker reported a conflict on. */
  conflictHeads: string[];
  receipts: ReceiptFact[];
  /** Sequence of the latest event that makes a routed receipt obsolete (resume, stale mark, revision). */
  obsoletedAt: number;
  /** Every gate verdict, oldest first. */
  verdicts: { seq: number; complete: boolean }[];
  runs: RunFact[];
  /** Per task: the revision last pushed, the last client run, the sequence of the last blocker. */
  pushed: Record<string, string>;
  clientRuns: Record<string, ClientRunFact>;
  blockers: Record<string, number>;
  /** Sequence of the last TaskResumed, 0 when none. */
  resumedAt: number;
  stored: StoredFact[];
  lostArtifacts: { artifactId: string; seq: number }[];
  reviews: { artifactId: string; sha256: string; decision: EventData<'ArtifactReviewed'>['decision'] }[];
  privacyApproved: string[];
}

/** A case as the coordinator decides on it: the shared view plus the rules' facts. */
export type CaseRecord = CaseView & { rules: RuleFacts };
export type DecisionState = { status: 'none' } | CaseRecord;

const initialRules = (): RuleFacts => ({
  lastScope: null,
  mayAsk: true,
  asked: [],
  handedOff: false,
  readinessJudged: [],
  taskActivity: null,
  conflictHeads: [],
  receipts: [],
  obsoletedAt: 0,
  verdicts: [],
  runs: [],
  pushed: {},
  clientRuns: {},
  blockers: {},
  resumedAt: 0,
  stored: [],
  lostArtifacts: [],
  reviews: [],
  privacyApproved: [],
});

/** The shared fold (`evolveCase`), and beside it the facts only the coordinator's rules read. */
export function evolveRecord(state: DecisionState, e: RecordedEvent): DecisionState {
  const view = evolveCase(state, e);
  if (view.status === 'none') return view;
  const before = state.status === 'none' ? initialRules() : state.rules;
  return { ...view, rules: view === state ? before : evolveRules(before, e) };
}

export const foldRecord = (events: readonly RecordedEvent[]): DecisionState =>
  events.reduce(evolveRecord, initialCaseState() as DecisionState);

function evolveRules(r: RuleFacts, e: RecordedEvent): RuleFacts {
  const activity =
    e.producer === 'worker' || e.type === 'TaskAssigned' || e.type === 'TaskResumed'
      ? { taskActivity: { at: e.occurredAt, type: e.type } }
      : {};
  const s: RuleFacts = { ...r, ...activity };
  switch (e.type) {
    case 'CaseOpened':
    case 'SourceLinked':
    case 'CaseMadeActionable':
      return { ...s, mayAsk: true };
    case 'ClarificationRequested':
      return {
        ...s,
        mayAsk: false,
        asked: [...s.asked, { missing: [...e.data.missing], question: e.data.question }],
      };
    case 'ClarificationHandedOff':
      return { ...s, mayAsk: false, handedOff: true };
    case 'ReadinessJudged':
      return { ...s, readinessJudged: [...s.readinessJudged, e.data] };
    case 'PrivacyScopeSet':
      return { ...s, lastScope: { brief: e.data.sanitizedBrief, categories: [...e.data.categories] } };
    case 'TargetRevisionChecked':
      return e.data.outcome === 'conflict' && !s.conflictHeads.includes(e.data.head)
        ? { ...s, conflictHeads: [...s.conflictHeads, e.data.head] }
        : s;
    case 'ReceiptBuilt':
      return { ...s, receipts: [...s.receipts, { seq: e.seq, data: e.data }] };
    case 'TaskResumed':
      return { ...s, obsoletedAt: e.seq, resumedAt: e.seq };
    case 'ProofMarkedStale':
    case 'RevisionRequested':
      return { ...s, obsoletedAt: e.seq };
    case 'GateEvaluated':
      return { ...s, verdicts: [...s.verdicts, { seq: e.seq, complete: e.data.complete }] };
    case 'ChecksCompleted': {
      const { taskId, revision, targetHead, passed, results } = e.data;
      return { ...s, runs: [...s.runs, { taskId, revision, targetHead, passed, results }] };
    }
    case 'BranchPushed':
      return { ...s, pushed: { ...s.pushed, [e.data.taskId]: e.data.revision } };
    case 'ClientValidationCompleted': {
      const d = e.data;
      const run = {
        revision: d.revision,
        outcome: d.outcome,
        reason: d.reason,
        captures: d.captureIds.length,
      };
      return { ...s, clientRuns: { ...s.clientRuns, [d.taskId]: run } };
    }
    case 'BlockerRaised':
      return { ...s, blockers: { ...s.blockers, [e.data.taskId]: e.seq } };
    case 'ArtifactStored': {
      const { artifactId, sha256, key, revision } = e.data;
      return { ...s, stored: [...s.stored, { artifactId, sha256, key, revision, seq: e.seq }] };
    }
    case 'ArtifactDurabilityFailed':
      return { ...s, lostArtifacts: [...s.lostArtifacts, { artifactId: e.data.artifactId, seq: e.seq }] };
    case 'ArtifactReviewed': {
      const { artifactId, sha256, decision } = e.data;
      return { ...s, reviews: [...s.reviews, { artifactId, sha256, decision }] };
    }
    case 'PrivacyApproved':
      return { ...s, privacyApproved: [...s.privacyApproved, e.data.artifactSha256] };
    default:
      return s;
  }
}

/**
 * Folds drafts as if recorded, so a decision can build on what it just decided; their sequences
 * follow the case's last one, so "after" and "before" comparisons hold for them too.
 */
export function simulate(state: DecisionState, drafts: readonly EventDraft[], caseId: string, now: string) {
  const last = state.status === 'none' ? 0 : state.lastSeq;
  return drafts.reduce(
    (s, d, i) =>
      evolveRecord(s, {
        ...d,
        eventId: `pending:${i}`,
        version: 1,
        aggregate: 'case',
        aggregateId: caseId,
        producer: 'coordinator',
        commandId: 'pending',
        causationId: null,
        correlationId: 'pending',
        occurredAt: now,
        seq: last + i + 1,
        subject: '',
      } as RecordedEvent),
    state,
  );
}
