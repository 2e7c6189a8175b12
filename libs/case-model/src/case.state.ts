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

export type DeliveryKind =
  | 'ack'
  | 'linked'
  | 'question'
  | 'blocker'
  | 'receipt'
  | 'notice'
  | 'link_review'
  | 'privacy_approval'
  | 'decision';

/** One post the coordinator asked for, and how far the outbox got with it. */
export interface CaseDelivery {
  deliveryId: string;
  sourceId: string;
  kind: DeliveryKind;
  receiptId: string | null;
  /** Known once the outbox journaled its first chunk. */
  chunkCount: number | null;
  confirmedChunks: number[];
  refused: boolean;
  /** Every chunk confirmed by Discord. */
  confirmed: boolean;
}

/** A report held on this case by a medium-confidence match, until a human settles it. */
export interface CaseLinkReview {
  reviewId: string;
  sourceId: string;
  channelId: string;
  threadId: string | null;
  messageId: string;
  guildId: string;
  reporterId: string;
  confidence: number;
  verdict: 'same' | 'different' | null;
}

export interface CaseCheckRun {
  taskId: string;
  revision: string;
  targetHead: string;
  passed: boolean;
  seq: number;
}

export interface CaseGate {
  revision: string;
  targetHead: string;
  complete: boolean;
  outcome: 'pr_ready' | 'implemented_client_blocked' | 'blocked' | null;
  seq: number;
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
  /** The guild of the first source (deliveries need a full Discord place). */
  guildId: string;
  linkReviews: CaseLinkReview[];
  /** The reviewer who turned the case into engineering work, if one did. */
  madeActionableBy: string | null;
  /** What the latest clarification asked for; empty once the case is ready. */
  missing: string[];
  questionsAsked: number;
  owner: string | null;
  /** Categories of private content removed from the brief (never the content). */
  privacyCategories: string[];
  task: 'none' | 'active' | 'cancelled';
  /** The target revision the task started from (TaskAssigned, or the worktree's base). */
  targetRevision: string | null;
  /** The newest head of the target branch any event reported. */
  targetHead: string | null;
  /** Heads the target branch has moved away from: a late report of one never moves `targetHead` back. */
  supersededHeads: string[];
  latestChecks: CaseCheckRun | null;
  latestGate: CaseGate | null;
  staleProofs: number;
  deliveries: CaseDelivery[];
  /** Receipts the coordinator routed to the sources, oldest first. */
  routedReceipts: string[];
  decision: { kind: 'approve' | 'revise' | 'reject'; reviewerId: string } | null;
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
      guildId: d.place.guildId,
      linkReviews: [],
      madeActionableBy: null,
      missing: [],
      questionsAsked: 0,
      owner: null,
      privacyCategories: [],
      task: 'none',
      targetRevision: null,
      targetHead: null,
      supersededHeads: [],
      latestChecks: null,
      latestGate: null,
      staleProofs: 0,
      deliveries: [],
      routedReceipts: [],
      decision: null,
    };
  }
  const s = bump(state, e);
  switch (e.type) {
    case 'SourceLinked': {
      const d = e.data;
      if (s.sources.some((x) => x.sourceId === d.sourceId)) return s;
      return {
        ...s,
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
    case 'LinkReviewRequested': {
      const d = e.data;
      if (s.linkReviews.some((r) => r.reviewId === d.reviewId)) return s;
      return {
        ...s,
        pendingLinkReviews: [...s.pendingLinkReviews, d.reviewId],
        linkReviews: [
          ...s.linkReviews,
          {
            reviewId: d.reviewId,
            sourceId: d.sourceId,
            channelId: d.place.channelId,
            threadId: d.place.threadId,
            messageId: d.place.messageId,
            guildId: d.place.guildId,
            reporterId: d.reporterId,
            confidence: d.confidence,
            verdict: null,
          },
        ],
      };
    }
    case 'LinkReviewSettled':
      return {
        ...s,
        pendingLinkReviews: s.pendingLinkReviews.filter((r) => r !== e.data.reviewId),
        linkReviews: s.linkReviews.map((r) =>
          r.reviewId === e.data.reviewId && r.verdict === null ? { ...r, verdict: e.data.verdict } : r,
        ),
      };
    case 'CaseClassified': {
      const c = e.data.classification;
      // A classification never pulls a case back once work started.
      const early =
        s.status === 'received' ||
        s.status === 'triage' ||
        s.status === 'feedback' ||
        s.status === 'needs_info';
      const status = !early
        ? s.status
        : c === 'feedback'
          ? 'feedback'
          : s.status === 'needs_info'
            ? 'needs_info'
            : 'triage';
      return { ...s, classification: c, status };
    }
    case 'ClarificationRequested':
      return { ...s, status: 'needs_info', missing: e.data.missing, questionsAsked: s.questionsAsked + 1 };
    case 'ReadinessConfirmed':
      return { ...s, status: 'actionable', missing: [], owner: e.data.owner, repository: e.data.repository };
    case 'CaseMadeActionable': {
      const waiting =
        s.status === 'feedback' ||
        s.status === 'triage' ||
        s.status === 'needs_info' ||
        s.status === 'received';
      return { ...s, madeActionableBy: e.data.reviewerId, status: waiting ? 'actionable' : s.status };
    }
    case 'PrivacyScopeSet':
      return { ...s, privacyCategories: [...e.data.categories] };
    case 'TaskAssigned':
      return {
        ...s,
        status: 'in_progress',
        task: 'active',
        taskId: e.data.taskId,
        repository: e.data.repository,
        targetBranch: e.data.targetBranch,
        targetRevision: e.data.targetRevision,
        ...observeHead(s, e.data.targetRevision),
      };
    case 'TaskResumed':
      return { ...s, status: 'in_progress' };
    case 'TaskCancelled':
      return { ...s, task: 'cancelled' };
    case 'WorktreePrepared':
      return {
        ...s,
        targetRevision: s.targetRevision ?? e.data.baseRevision,
        ...(s.targetHead ? {} : observeHead(s, e.data.baseRevision)),
      };
    case 'TargetRevisionChecked':
      return { ...s, ...observeHead(s, e.data.head) };
    case 'ChecksCompleted':
      return {
        ...s,
        revision: e.data.revision,
        ...observeHead(s, e.data.targetHead),
        latestChecks: {
          taskId: e.data.taskId,
          revision: e.data.revision,
          targetHead: e.data.targetHead,
          passed: e.data.passed,
          seq: e.seq,
        },
        status: e.data.passed && !isTerminal(s.status) ? 'validating' : s.status,
      };
    case 'BranchPushed':
      return { ...s, branch: e.data.branch };
    case 'BlockerRaised':
      return isTerminal(s.status) ? s : { ...s, status: 'blocked' };
    case 'GateEvaluated': {
      const d = e.data;
      const latestGate: CaseGate = {
        revision: d.revision,
        targetHead: d.targetHead,
        complete: d.complete,
        outcome: d.outcome,
        seq: e.seq,
      };
      if (d.complete && d.outcome) return { ...s, latestGate, status: d.outcome };
      // A truthful "blocked" verdict blocks the case even though the gate is not complete.
      return d.outcome === 'blocked' && !isTerminal(s.status)
        ? { ...s, latestGate, status: 'blocked' }
        : { ...s, latestGate };
    }
    case 'ProofMarkedStale':
      return { ...s, status: 'stale', staleProofs: s.staleProofs + 1, ...observeHead(s, e.data.targetHead) };
    case 'ReceiptBuilt':
      return { ...s, latestReceiptId: e.data.receiptId };
    case 'DeliveryRequested': {
      const d = e.data;
      if (s.deliveries.some((x) => x.deliveryId === d.deliveryId)) return s;
      const rid = d.receiptId;
      return {
        ...s,
        deliveries: [
          ...s.deliveries,
          {
            deliveryId: d.deliveryId,
            sourceId: d.sourceId,
            kind: d.kind,
            receiptId: rid,
            chunkCount: null,
            confirmedChunks: [],
            refused: false,
            confirmed: false,
          },
        ],
        routedReceipts:
          rid && d.kind === 'receipt' && !s.routedReceipts.includes(rid)
            ? [...s.routedReceipts, rid]
            : s.routedReceipts,
        sources: rid
          ? s.sources.map((x) =>
              x.sourceId === d.sourceId && !(rid in x.receiptConfirmed)
                ? { ...x, receiptConfirmed: { ...x.receiptConfirmed, [rid]: false } }
                : x,
            )
          : s.sources,
      };
    }
    case 'DeliveryIntended':
      return {
        ...s,
        deliveries: s.deliveries.map((x) =>
          x.deliveryId === e.data.deliveryId ? settleDelivery({ ...x, chunkCount: e.data.chunkCount }) : x,
        ),
      };
    case 'DeliveryConfirmed': {
      const d = e.data;
      const target = s.deliveries.find((x) => x.deliveryId === d.deliveryId);
      if (!target) return s;
      const after = settleDelivery({
        ...target,
        confirmedChunks: target.confirmedChunks.includes(d.chunkIndex)
          ? target.confirmedChunks
          : [...target.confirmedChunks, d.chunkIndex].sort((a, b) => a - b),
      });
      const rid = after.receiptId;
      return {
        ...s,
        deliveries: s.deliveries.map((x) => (x.deliveryId === d.deliveryId ? after : x)),
        sources:
          rid && after.confirmed
            ? s.sources.map((x) =>
                x.sourceId === after.sourceId
                  ? { ...x, receiptConfirmed: { ...x.receiptConfirmed, [rid]: true } }
                  : x,
              )
            : s.sources,
      };
    }
    case 'DeliveryRefused':
      return {
        ...s,
        deliveries: s.deliveries.map((x) =>
          x.deliveryId === e.data.deliveryId ? { ...x, refused: true } : x,
        ),
      };
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
    case 'ReviewerDecided':
      return { ...s, decision: { kind: e.data.decision, reviewerId: e.data.reviewerId } };
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

/** The target branch only moves forward: a head already moved away from stays history. */
function observeHead(s: CaseView, head: string | null): Pick<CaseView, 'targetHead' | 'supersededHeads'> {
  if (!head || head === s.targetHead || s.supersededHeads.includes(head))
    return { targetHead: s.targetHead, supersededHeads: s.supersededHeads };
  return {
    targetHead: head,
    supersededHeads: s.targetHead ? [...s.supersededHeads, s.targetHead] : s.supersededHeads,
  };
}

/** A delivery is confirmed when every chunk the outbox announced has a confirmation. */
function settleDelivery(d: CaseDelivery): CaseDelivery {
  const confirmed = d.chunkCount !== null && d.confirmedChunks.length >= d.chunkCount;
  return confirmed === d.confirmed ? d : { ...d, confirmed };
}

/** The thread a source's replies and deliveries live in: its thread, or the thread started on its message. */
export const threadKeyOf = (s: Pick<CaseSource, 'threadId' | 'messageId'>): string =>
  s.threadId ?? s.messageId;

/**
 * One source per Discord thread of the case, first come: a receipt goes to every thread that
 * reported the case once, not once per reply written in the same thread.
 */
export function receiptThreads(state: CaseView): CaseSource[] {
  const seen = new Set<string>();
  return state.sources.filter((s) => {
    const k = threadKeyOf(s);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export const foldCase = (events: readonly RecordedEvent[]): CaseState =>
  events.reduce(evolveCase, initialCaseState());
