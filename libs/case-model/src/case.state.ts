import type { Classification, RecordedEvent } from '@caseloop/contracts';

/**
 * The case as every reader sees it, folded from the ledger by one pure `evolve`.
 * Services, projections and `caseloop audit` all use this same function, so a projection
 * that disagrees with a re-fold is drift by definition.
 */
export const CASE_STATUSES = [
  'received',
  'triage',
  'feedback',
  'needs_info',
  'actionable',
  'in_progress',
  'validating',
  'pr_ready',
  'implemented_client_blocked',
  'blocked',
  'awaiting_review',
  'approved',
  'revision_requested',
  'rejected',
  'duplicate',
  'stale',
] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];

export const TERMINAL_STATUSES: readonly CaseStatus[] = ['approved', 'rejected', 'duplicate'];
export const isTerminal = (s: CaseStatus): boolean => TERMINAL_STATUSES.includes(s);

export interface CaseSource {
  sourceId: string;
  channelId: string;
  threadId: string | null;
  messageId: string;
  reporterId: string;
  via: 'opened' | 'semantic_match' | 'link_review' | 'thread';
  /** Discord message ids of confirmed chunks per receipt id. */
  receiptConfirmed: Record<string, boolean>;
}

export interface CaseView {
  caseId: string;
  status: CaseStatus;
  title: string;
  classification: Classification | null;
  sources: CaseSource[];
  taskId: string | null;
  repository: string | null;
  targetBranch: string | null;
  /** The revision the latest checks ran on. */
  revision: string | null;
  openedAt: string;
  updatedAt: string;
  lastSeq: number;
  lastEventType: string;
  eventCount: number;
  pendingLinkReviews: string[];
  latestReceiptId: string | null;
  branch: string | null;
}

export type CaseState = { status: 'none' } | CaseView;

export const initialCaseState = (): CaseState => ({ status: 'none' });

const bump = (s: CaseView, e: RecordedEvent): CaseView => ({
  ...s,
  updatedAt: e.occurredAt,
  lastSeq: e.seq,
  lastEventType: e.type,
  eventCount: s.eventCount + 1,
});

/**
 * Folds one case event. Unknown-to-the-case events (another aggregate) are ignored.
 * Every branch returns a new object: states are values.
 */
export function evolveCase(state: CaseState, e: RecordedEvent): CaseState {
  if (e.aggregate !== 'case') return state;
  if (state.status === 'none') {
    if (e.type !== 'CaseOpened') return state;
    const d = e.data;
    return {
      caseId: e.aggregateId,
      status: 'received',
      title: d.title,
      classification: null,
      sources: [
        {
          sourceId: d.sourceId,
          channelId: d.place.channelId,
          threadId: d.place.threadId,
          messageId: d.place.messageId,
          reporterId: d.reporterId,
          via: 'opened',
          receiptConfirmed: {},
        },
      ],
      taskId: null,
      repository: null,
      targetBranch: null,
      revision: null,
      openedAt: e.occurredAt,
      updatedAt: e.occurredAt,
      lastSeq: e.seq,
      lastEventType: e.type,
      eventCount: 1,
      pendingLinkReviews: [],
      latestReceiptId: null,
      branch: null,
    };
  }
  const s = bump(state, e);
  switch (e.type) {
    case 'SourceLinked': {
      const d = e.data;
      const pending = s.pendingLinkReviews;
      if (s.sources.some((x) => x.sourceId === d.sourceId)) return s;
      return {
        ...s,
        pendingLinkReviews: pending,
        sources: [
          ...s.sources,
          {
            sourceId: d.sourceId,
            channelId: d.place.channelId,
            threadId: d.place.threadId,
            messageId: d.place.messageId,
            reporterId: d.reporterId,
            via: d.via,
            receiptConfirmed: {},
          },
        ],
      };
    }
    case 'LinkReviewRequested':
      return { ...s, pendingLinkReviews: [...s.pendingLinkReviews, e.data.reviewId] };
    case 'LinkReviewSettled':
      return { ...s, pendingLinkReviews: s.pendingLinkReviews.filter((r) => r !== e.data.reviewId) };
    case 'CaseClassified': {
      const c = e.data.classification;
      return { ...s, classification: c, status: c === 'feedback' ? 'feedback' : 'triage' };
    }
    case 'ClarificationRequested':
      return { ...s, status: 'needs_info' };
    case 'ReadinessConfirmed':
    case 'CaseMadeActionable':
      return { ...s, status: 'actionable', repository: e.type === 'ReadinessConfirmed' ? e.data.repository : s.repository };
    case 'TaskAssigned':
      return { ...s, status: 'in_progress', taskId: e.data.taskId, repository: e.data.repository, targetBranch: e.data.targetBranch };
    case 'TaskResumed':
      return { ...s, status: 'in_progress' };
    case 'ChecksCompleted':
      return { ...s, revision: e.data.revision, status: e.data.passed ? 'validating' : s.status };
    case 'BranchPushed':
      return { ...s, branch: e.data.branch };
    case 'BlockerRaised':
      return { ...s, status: 'blocked' };
    case 'GateEvaluated':
      return e.data.complete && e.data.outcome ? { ...s, status: e.data.outcome } : s;
    case 'ProofMarkedStale':
      return { ...s, status: 'stale' };
    case 'ReceiptBuilt':
      return { ...s, latestReceiptId: e.data.receiptId };
    case 'DeliveryRequested': {
      const rid = e.data.receiptId;
      if (!rid) return s;
      return {
        ...s,
        sources: s.sources.map((x) =>
          x.sourceId === e.data.sourceId && !(rid in x.receiptConfirmed)
            ? { ...x, receiptConfirmed: { ...x.receiptConfirmed, [rid]: false } }
            : x,
        ),
      };
    }
    case 'DeliveryConfirmed':
      return s;
    case 'CaseAwaitingReview':
      return {
        ...s,
        status: 'awaiting_review',
        sources: s.sources.map((x) =>
          e.data.confirmedSources.includes(x.sourceId)
            ? { ...x, receiptConfirmed: { ...x.receiptConfirmed, [e.data.receiptId]: true } }
            : x,
        ),
      };
    case 'CaseApproved':
      return { ...s, status: 'approved' };
    case 'RevisionRequested':
      return { ...s, status: 'revision_requested' };
    case 'CaseRejected':
      return { ...s, status: 'rejected' };
    case 'CaseMarkedDuplicate':
      return { ...s, status: 'duplicate' };
    default:
      return s;
  }
}

export const foldCase = (events: readonly RecordedEvent[]): CaseState => events.reduce(evolveCase, initialCaseState());
