import {
  CaseView,
  CaseState,
  evolveCase,
  foldCase,
  isTerminal,
  receiptThreads,
  threadKeyOf,
} from '@caseloop/case-model';
import { DiscordPlace, draft, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { redactText } from '@caseloop/privacy';
import { assessReadiness, clarificationQuestion } from '../triage/readiness.rules';
import { caseTitle, privacyScope } from '../triage/privacy-scope';
import { classifyByRules, DISPATCHABLE } from '../triage/triage.rules';
import { CaseCommand, CaseContext, CaseDecision, SourceFacts } from './case.commands';
import { deliveryId, taskIdForCase } from './case.ids';
import { evaluateGate } from './completion-gate';

/**
 * The coordinator's case decider: `decideCase(command, events, context) → events`. Pure: the
 * events are the whole case as loaded from the ledger, time and source texts come in with the
 * context. Because the handler runs it under optimistic concurrency on the case's coordinator
 * subject, and every rule below looks at the case's own history first, a second task, a second
 * opening or a second receipt routing cannot be produced by two racing handlers.
 */
export function decideCase(
  command: CaseCommand,
  events: readonly RecordedEvent[],
  ctx: CaseContext,
): CaseDecision {
  const state = foldCase(events);
  switch (command.kind) {
    case 'open_case':
      return openCase(state, events, command.caseId, command.source, command.identity, ctx);
    case 'link_source':
      return linkSource(state, events, command.source, command.via, command.identity, ctx);
    case 'hold_source':
      return holdSource(state, command.source, command.reviewId, command.identity);
    case 'observe':
      return observe(state, events, command.event, ctx);
    case 'reexamine':
      if (state.status === 'none') return refuse('case_not_found', 'no such case');
      return ok([
        ...pendingGate(state, events, ctx),
        ...awaitReview(state, events, ctx),
        ...idleTask(state, events, ctx),
      ]);
  }
}

const ok = (events: EventDraft[]): CaseDecision => ({ ok: true, events });
const refuse = (code: Extract<CaseDecision, { ok: false }>['code'], message: string): CaseDecision => ({
  ok: false,
  code,
  message,
});

function openCase(
  state: CaseState,
  events: readonly RecordedEvent[],
  caseId: string,
  source: SourceFacts,
  identity: { confidence: number; reasons: string[] },
  ctx: CaseContext,
): CaseDecision {
  if (state.status !== 'none') {
    return state.sources.some((s) => s.sourceId === source.sourceId)
      ? ok([])
      : refuse('case_exists', `case ${state.caseId} is already open`);
  }
  const scope = privacyScope(ctx.sources.length > 0 ? ctx.sources : [source], ctx.privateMarkers);
  const opened = draft('CaseOpened', {
    sourceId: source.sourceId,
    place: source.place,
    reporterId: source.reporterId,
    title: caseTitle(scope.texts[0] ?? ''),
    confidence: identity.confidence,
    reasons: identity.reasons.slice(0, 20),
  });
  const after = simulate(events, [opened], caseId, ctx.now);
  const step = evaluate(after.state as CaseView, after.events, ctx, true);
  const drafts: EventDraft[] = [opened, ...step.drafts];
  if (step.next.kind !== 'question') {
    drafts.push(
      delivery(
        source,
        'ack',
        deliveryId('ack', source.sourceId),
        `Thanks — this is now case ${caseId}. ${step.next.content}`,
      ),
    );
  }
  return ok(drafts);
}

function linkSource(
  state: CaseState,
  events: readonly RecordedEvent[],
  source: SourceFacts,
  via: 'semantic_match' | 'thread',
  identity: { confidence: number; reasons: string[] },
  ctx: CaseContext,
): CaseDecision {
  if (state.status === 'none') return refuse('case_not_found', 'no such case');
  if (state.sources.some((s) => s.sourceId === source.sourceId)) return ok([]);
  if (isTerminal(state.status)) return refuse('case_closed', `case ${state.caseId} is ${state.status}`);
  const linked = draft('SourceLinked', {
    sourceId: source.sourceId,
    place: source.place,
    reporterId: source.reporterId,
    via,
    confidence: identity.confidence,
    reasons: identity.reasons.slice(0, 20),
  });
  return ok(joined(state, events, linked, source, via !== 'thread', ctx));
}

/** A source joined: tell it (unless it is a reply in the thread), catch it up on a routed receipt, re-evaluate. */
function joined(
  state: CaseView,
  events: readonly RecordedEvent[],
  linked: EventDraft<'SourceLinked'>,
  source: SourceFacts,
  announce: boolean,
  ctx: CaseContext,
): EventDraft[] {
  const drafts: EventDraft[] = [linked];
  if (announce) {
    drafts.push(
      delivery(
        source,
        'linked',
        deliveryId('linked', source.sourceId),
        `Thanks — this is the same problem as case ${state.caseId} ("${state.title}"). Your report joined that case; you will get its result here too.`,
      ),
    );
  }
  const after = simulate(events, drafts, state.caseId, ctx.now);
  const s = after.state as CaseView;
  const routed = routedReceipt(s, after.events);
  // A reply in a thread that already has the receipt does not get another one.
  const covered = receiptThreads(state).some(
    (x) => threadKeyOf(x) === (source.place.threadId ?? source.place.messageId),
  );
  if (routed && !isTerminal(s.status) && !covered) drafts.push(receiptDelivery(source, routed));
  drafts.push(...evaluate(s, after.events, ctx, false).drafts);
  return drafts;
}

function holdSource(
  state: CaseState,
  source: SourceFacts,
  reviewId: string,
  identity: { confidence: number; reasons: string[] },
): CaseDecision {
  if (state.status === 'none') return refuse('case_not_found', 'no such case');
  if (
    state.linkReviews.some((r) => r.reviewId === reviewId) ||
    state.sources.some((s) => s.sourceId === source.sourceId)
  )
    return ok([]);
  if (isTerminal(state.status)) return refuse('case_closed', `case ${state.caseId} is ${state.status}`);
  return ok([
    draft('LinkReviewRequested', {
      sourceId: source.sourceId,
      place: source.place,
      reporterId: source.reporterId,
      reviewId,
      confidence: identity.confidence,
      reasons: identity.reasons.slice(0, 20),
    }),
    delivery(
      source,
      'link_review',
      deliveryId('review', reviewId),
      `Thanks — this might be the same problem as case ${state.caseId} ("${state.title}"), but we are not sure, so a human will check. ` +
        `Reviewers: reply \`same ${reviewId}\` or \`different ${reviewId}\`. Your report is kept either way.`,
    ),
  ]);
}

function observe(
  state: CaseState,
  events: readonly RecordedEvent[],
  e: RecordedEvent,
  ctx: CaseContext,
): CaseDecision {
  if (e.aggregate !== 'case') return refuse('not_a_case_event', `${e.type} is not a case event`);
  if (state.status === 'none') return refuse('case_not_found', 'no such case');
  switch (e.type) {
    case 'LinkReviewSettled': {
      const review = state.linkReviews.find((r) => r.reviewId === e.data.reviewId);
      if (!review || e.data.verdict !== 'same' || state.sources.some((s) => s.sourceId === review.sourceId))
        return ok([]);
      if (isTerminal(state.status)) return ok([]);
      const source = ctx.sources.find((s) => s.sourceId === review.sourceId) ?? heldFacts(review);
      const linked = draft('SourceLinked', {
        sourceId: review.sourceId,
        place: source.place,
        reporterId: review.reporterId,
        via: 'link_review',
        confidence: review.confidence,
        reasons: [`a reviewer settled link review ${review.reviewId}: same case`],
      });
      return ok(joined(state, events, linked, source, true, ctx));
    }
    case 'CaseMadeActionable':
      if (isTerminal(state.status)) return ok([]);
      return ok(evaluate(state, events, ctx, false).drafts);
    case 'ChecksCompleted':
    case 'TargetRevisionChecked':
      return ok(staleProof(state, events));
    case 'ReceiptBuilt':
      return ok(gate(state, events, e, ctx));
    case 'DeliveryConfirmed':
    case 'DeliveryRefused':
      return ok(awaitReview(state, events, ctx));
    case 'BlockerRaised': {
      if (isTerminal(state.status) || e.data.taskId !== state.taskId) return ok([]);
      const first = state.sources[0];
      if (!first) return ok([]);
      return ok([
        delivery(
          factsOf(state, first.sourceId),
          'blocker',
          deliveryId('blocker', state.caseId, String(e.seq)),
          `Case ${state.caseId} is blocked (${e.data.kind.replace(/_/g, ' ')}): ${safe(e.data.detail)}\nA human needs to act before the task can go on.`,
        ),
      ]);
    }
    case 'ReviewerDecided':
      return ok(humanDecision(state, events, e));
    default:
      return ok([]);
  }
}

/** Triage, privacy scope and readiness; assigns the one task when everything is clear. */
function evaluate(
  state: CaseView,
  events: readonly RecordedEvent[],
  ctx: CaseContext,
  opening: boolean,
): { drafts: EventDraft[]; next: { kind: 'question' | 'task' | 'waiting'; content: string } } {
  const waiting = (content: string) => ({ drafts, next: { kind: 'waiting' as const, content } });
  const drafts: EventDraft[] = [];
  if (isTerminal(state.status) || state.task !== 'none') return waiting('');
  const scope = privacyScope(ctx.sources, ctx.privateMarkers);
  const triage = ctx.classifier ?? classifyByRules({ texts: scope.texts, keptRatio: scope.keptRatio });
  if (state.classification !== triage.classification) {
    drafts.push(
      draft('CaseClassified', {
        classification: triage.classification,
        confidence: triage.confidence,
        reasons: triage.reasons.slice(0, 20),
        by: ctx.classifier ? 'classifier' : 'rules',
      }),
    );
  }
  const lastScope = [...events]
    .reverse()
    .find((x): x is RecordedEvent<'PrivacyScopeSet'> => x.type === 'PrivacyScopeSet');
  if (
    !lastScope ||
    lastScope.data.sanitizedBrief !== scope.brief ||
    lastScope.data.categories.join() !== scope.categories.join()
  ) {
    drafts.push(
      draft('PrivacyScopeSet', {
        categories: scope.categories,
        redactions: scope.redactions,
        sanitizedBrief: scope.brief,
      }),
    );
  }
  const human = state.madeActionableBy !== null;
  if (!human && !DISPATCHABLE.includes(triage.classification)) {
    return waiting(WAITING[triage.classification] ?? 'A reviewer will look at it.');
  }
  const readiness = assessReadiness({
    texts: scope.texts,
    attachments: ctx.sources.reduce((n, s) => n + s.attachments, 0),
    keptRatio: scope.keptRatio,
    route: ctx.route,
    repositories: ctx.repositories,
    regression: triage.classification === 'regression',
  });
  const repo = ctx.repositories.find((r) => r.id === readiness.repository);
  // A reviewer who makes the case actionable vouches for everything but the owner.
  const missing = (human ? readiness.missing.filter((f) => f === 'owner') : readiness.missing).filter(
    (f) => f !== 'owner' || !repo,
  );
  if (!repo && !missing.includes('owner')) missing.push('owner');
  if (missing.length > 0) {
    if (!mayAsk(events) || state.questionsAsked >= ctx.maxQuestions) {
      return waiting('We still need a few details; an engineer will follow up in this thread.');
    }
    const question = clarificationQuestion(state.caseId, missing);
    drafts.push(draft('ClarificationRequested', { missing, question }));
    const first = state.sources[0];
    if (first)
      drafts.push(
        delivery(
          factsOf(state, first.sourceId),
          'question',
          deliveryId('question', state.caseId, String(state.questionsAsked + 1)),
          question,
        ),
      );
    return { drafts, next: { kind: 'question', content: question } };
  }
  const owner = readiness.owner ?? repo!.owner;
  const taskId = taskIdForCase(state.caseId, state.openedAt);
  drafts.push(draft('ReadinessConfirmed', { owner, repository: repo!.id }));
  drafts.push(
    draft('TaskAssigned', {
      taskId,
      repository: repo!.id,
      targetBranch: repo!.targetBranch,
      targetRevision: null,
      brief: scope.brief,
    }),
  );
  const next = `Task ${taskId} is working on it in ${repo!.id} (${repo!.targetBranch}); you will get a receipt with the evidence here, then a reviewer decides.`;
  if (!opening) {
    const first = state.sources[0];
    if (first)
      drafts.push(
        delivery(
          factsOf(state, first.sourceId),
          'notice',
          deliveryId('task', taskId),
          `Case ${state.caseId} is actionable. ${next}`,
        ),
      );
  }
  return { drafts, next: { kind: 'task', content: next } };
}

const WAITING: Partial<Record<string, string>> = {
  feedback:
    'It is recorded as product feedback; a reviewer can turn it into engineering work with `actionable`.',
  question: 'It reads as a question; a human will answer here.',
  access:
    'It looks like an access or permission problem; a reviewer will check it before anything is changed.',
  private_context:
    'Most of it is private context, which never reaches a coding agent; a reviewer will look at it.',
};

/** Ask again only when something new arrived since the last question. */
function mayAsk(events: readonly RecordedEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const t = (events[i] as RecordedEvent).type;
    if (t === 'ClarificationRequested') return false;
    if (t === 'SourceLinked' || t === 'CaseMadeActionable' || t === 'CaseOpened') return true;
  }
  return true;
}

/**
 * A task the worker has gone silent on (its process restarted and lost it) is resumed, same task
 * id: the worker picks up TaskResumed like TaskAssigned. Once per silence, since the resume is news.
 */
function idleTask(state: CaseView, events: readonly RecordedEvent[], ctx: CaseContext): EventDraft[] {
  if (state.status !== 'in_progress' || state.task !== 'active' || !state.taskId) return [];
  const last = [...events]
    .reverse()
    .find((e) => e.producer === 'worker' || e.type === 'TaskAssigned' || e.type === 'TaskResumed');
  if (!last || Date.parse(ctx.now) - Date.parse(last.occurredAt) < ctx.taskIdleMs) return [];
  return [
    draft('TaskResumed', {
      taskId: state.taskId,
      reason: 'worker_restart',
      note: `No worker event since ${last.occurredAt} (${last.type}); resuming the same task.`,
    }),
  ];
}

/**
 * The target moved after a passing run the case relies on: the proof is history, the same task
 * resumes, and every thread that was shown a receipt of that proof is told it is out of date.
 */
function staleProof(state: CaseView, events: readonly RecordedEvent[]): EventDraft[] {
  const relying = ['validating', 'pr_ready', 'implemented_client_blocked', 'awaiting_review'];
  const proof = state.latestChecks;
  if (!state.taskId || state.task !== 'active' || !relying.includes(state.status) || !proof || !proof.passed)
    return [];
  // The fold never moves the head backwards, so a late run on a superseded head is stale too.
  const head = state.targetHead;
  if (!head || proof.targetHead === head) return [];
  return [
    draft('ProofMarkedStale', { taskId: state.taskId, provenRevision: proof.revision, targetHead: head }),
    draft('TaskResumed', {
      taskId: state.taskId,
      reason: 'stale_proof',
      note: `The target branch moved to ${head} after checks passed on ${proof.revision}; rebase and prove again.`,
    }),
    ...staleNotices(state, events, head),
  ];
}

/**
 * A short notice in every thread the routed receipt was posted to, once per receipt (the delivery
 * id names the receipt and the source, and a stale receipt is never routed again). Nothing when
 * no receipt was routed: nobody was shown the proof. Must run before the stale mark is recorded.
 */
function staleNotices(state: CaseView, events: readonly RecordedEvent[], head: string): EventDraft[] {
  const receipt = routedReceipt(state, events);
  if (!receipt) return [];
  const rid = receipt.data.receiptId;
  const shown = state.deliveries.filter((d) => d.kind === 'receipt' && d.receiptId === rid && !d.refused);
  const branch = state.targetBranch ? `\`${state.targetBranch.replace(/`/g, "'")}\`` : 'the target branch';
  const conflict = events.some(
    (x) => x.type === 'TargetRevisionChecked' && x.data.head === head && x.data.outcome === 'conflict',
  );
  const text =
    `The target branch ${branch} moved to \`${head.slice(0, 12)}\` after this result was proven on \`${receipt.data.revision.slice(0, 12)}\`; ` +
    (conflict
      ? `the change no longer applies to the new head cleanly, so a human needs to resolve the conflict before case ${state.caseId} can be proven again. The receipt above is out of date and cannot be approved.`
      : `caseloop is proving case ${state.caseId} again on the new head. The receipt above is out of date — a new one will follow here, and only that one can be approved.`);
  const threads = new Set<string>();
  const drafts: EventDraft[] = [];
  for (const d of shown) {
    const s = state.sources.find((x) => x.sourceId === d.sourceId);
    if (!s || threads.has(threadKeyOf(s))) continue;
    threads.add(threadKeyOf(s));
    drafts.push(delivery(factsOf(state, s.sourceId), 'notice', deliveryId('stale', rid, s.sourceId), text));
  }
  return drafts;
}

/** A receipt was built: judge it, and route it to every source only if it may be shown. */
function gate(
  state: CaseView,
  events: readonly RecordedEvent[],
  e: RecordedEvent<'ReceiptBuilt'>,
  ctx: CaseContext,
): EventDraft[] {
  if (isTerminal(state.status) || !state.taskId || e.data.taskId !== state.taskId || state.task !== 'active')
    return [];
  if (events.some((x) => x.type === 'GateEvaluated' && x.seq > e.seq)) return [];
  const repo = ctx.repositories.find((r) => r.id === state.repository);
  const verdict = evaluateGate(state, events, e.data, repo?.checkKinds ?? []);
  const drafts: EventDraft[] = [
    draft('GateEvaluated', {
      taskId: state.taskId,
      revision: e.data.revision,
      targetHead: verdict.targetHead,
      claims: verdict.claims,
      complete: verdict.complete,
      outcome: verdict.outcome,
    }),
  ];
  if (verdict.stale) {
    // A receipt routed earlier and not yet superseded was proven on the old head as well.
    const notices = staleNotices(state, events, verdict.targetHead);
    drafts.push(
      draft('ProofMarkedStale', {
        taskId: state.taskId,
        provenRevision: e.data.revision,
        targetHead: verdict.targetHead,
      }),
      draft('TaskResumed', {
        taskId: state.taskId,
        reason: 'stale_proof',
        note: `The target branch moved to ${verdict.targetHead}; the proof on ${e.data.revision} no longer counts.`,
      }),
      ...notices,
    );
    return drafts;
  }
  if (verdict.complete || verdict.outcome === 'blocked') {
    for (const s of receiptThreads(state)) drafts.push(receiptDelivery(factsOf(state, s.sourceId), e));
  }
  return drafts;
}

/** The gate has not judged the latest receipt (a crash between the two): judge it now. */
function pendingGate(state: CaseView, events: readonly RecordedEvent[], ctx: CaseContext): EventDraft[] {
  const receipt = [...events]
    .reverse()
    .find((x): x is RecordedEvent<'ReceiptBuilt'> => x.type === 'ReceiptBuilt');
  return receipt ? gate(state, events, receipt, ctx) : [];
}

/** The receipt routed after the latest gate, if nothing has since made it obsolete. */
function routedReceipt(
  state: CaseView,
  events: readonly RecordedEvent[],
): RecordedEvent<'ReceiptBuilt'> | null {
  const rid = state.routedReceipts.at(-1);
  if (!rid) return null;
  const receipt = [...events]
    .reverse()
    .find((x): x is RecordedEvent<'ReceiptBuilt'> => x.type === 'ReceiptBuilt' && x.data.receiptId === rid);
  if (!receipt) return null;
  const obsolete = events.some(
    (x) =>
      x.seq > receipt.seq &&
      (x.type === 'TaskResumed' || x.type === 'ProofMarkedStale' || x.type === 'RevisionRequested'),
  );
  return obsolete ? null : receipt;
}

/**
 * Awaiting review only when every source routed to the case is on it, and the receipt is
 * confirmed in every source's thread.
 */
function awaitReview(state: CaseView, events: readonly RecordedEvent[], ctx: CaseContext): EventDraft[] {
  if (isTerminal(state.status) || state.status === 'awaiting_review') return [];
  const landed = (id: string) =>
    state.sources.some((s) => s.sourceId === id) || state.linkReviews.some((r) => r.sourceId === id);
  if ((ctx.routed ?? []).some((id) => !landed(id))) return [];
  const receipt = routedReceipt(state, events);
  if (!receipt) return [];
  // A blocked receipt is shown to everyone but asks for a revision or a rejection, not a review.
  const verdict = events.find(
    (x): x is RecordedEvent<'GateEvaluated'> => x.type === 'GateEvaluated' && x.seq > receipt.seq,
  );
  if (!verdict?.data.complete) return [];
  const rid = receipt.data.receiptId;
  const drafts: EventDraft[] = [];
  const confirmed: string[] = [];
  const threads = receiptThreads(state);
  for (const s of threads) {
    const inThread = new Set(
      state.sources.filter((x) => threadKeyOf(x) === threadKeyOf(s)).map((x) => x.sourceId),
    );
    const ds = state.deliveries.filter(
      (d) => d.kind === 'receipt' && d.receiptId === rid && inThread.has(d.sourceId),
    );
    if (ds.length === 0) drafts.push(receiptDelivery(factsOf(state, s.sourceId), receipt));
    else if (ds.some((d) => d.confirmed)) confirmed.push(s.sourceId);
  }
  if (drafts.length > 0 || confirmed.length !== threads.length || confirmed.length === 0) return drafts;
  return [draft('CaseAwaitingReview', { receiptId: rid, confirmedSources: confirmed })];
}

function humanDecision(
  state: CaseView,
  events: readonly RecordedEvent[],
  e: RecordedEvent<'ReviewerDecided'>,
): EventDraft[] {
  if (isTerminal(state.status)) return [];
  const d = e.data;
  const first = state.sources[0];
  const notice = (text: string): EventDraft[] =>
    first
      ? [delivery(factsOf(state, first.sourceId), 'notice', deliveryId('notice', d.messageId), text)]
      : [];
  const toAll = (text: string): EventDraft[] =>
    receiptThreads(state).map((s) =>
      delivery(factsOf(state, s.sourceId), 'decision', deliveryId('decision', d.messageId, s.sourceId), text),
    );
  switch (d.decision) {
    case 'approve': {
      // The head moved under the receipt (reported, not yet marked stale): the proof is stale now.
      const stale = staleProof(state, events);
      if (stale.length > 0) {
        return [
          ...stale,
          ...notice(
            `Case ${state.caseId} cannot be approved: the target branch moved after its receipt was proven, so that proof no longer counts. A new receipt will follow once it is proven again.`,
          ),
        ];
      }
      if (state.status !== 'awaiting_review') {
        return notice(
          `Case ${state.caseId} cannot be approved yet: it is ${state.status.replace(/_/g, ' ')}, and approval needs a receipt confirmed in every thread.`,
        );
      }
      return [
        draft('CaseApproved', { reviewerId: d.reviewerId, branch: state.branch, revision: state.revision }),
        ...toAll(
          `Case ${state.caseId} was approved by <@${d.reviewerId}>. Nothing was merged: ${state.branch ? `branch \`${state.branch}\`` : 'the branch'} waits for a human to merge it.`,
        ),
      ];
    }
    case 'revise': {
      if (!state.taskId || state.task !== 'active')
        return notice(`Case ${state.caseId} has no task to revise yet.`);
      // Redaction markers can be longer than what they replace: clip to the schema's bound.
      const text = safe(d.text ?? 'revision requested').slice(0, 4000) || 'revision requested';
      return [
        draft('RevisionRequested', { reviewerId: d.reviewerId, text }),
        draft('TaskResumed', { taskId: state.taskId, reason: 'revision_requested', note: text }),
        ...notice(`Revision requested by <@${d.reviewerId}>; task ${state.taskId} resumes with it.`),
      ];
    }
    case 'reject':
      return [
        draft('CaseRejected', {
          reviewerId: d.reviewerId,
          reason: d.text ? safe(d.text).slice(0, 4000) : null,
        }),
        ...(state.taskId && state.task === 'active'
          ? [draft('TaskCancelled', { taskId: state.taskId, reason: 'rejected by a reviewer' })]
          : []),
        ...toAll(`Case ${state.caseId} was rejected by <@${d.reviewerId}>.`),
      ];
  }
}

function receiptDelivery(
  source: Pick<SourceFacts, 'sourceId' | 'place'>,
  receipt: RecordedEvent<'ReceiptBuilt'>,
): EventDraft {
  const rid = receipt.data.receiptId;
  return draft('DeliveryRequested', {
    deliveryId: deliveryId('receipt', rid, source.sourceId),
    sourceId: source.sourceId,
    kind: 'receipt',
    place: source.place,
    content: safe(receipt.data.rendered).slice(0, 12_000) || `Receipt ${rid}`,
    receiptId: rid,
  });
}

function delivery(
  source: Pick<SourceFacts, 'sourceId' | 'place'>,
  kind: 'ack' | 'linked' | 'question' | 'blocker' | 'notice' | 'link_review' | 'decision',
  id: string,
  content: string,
): EventDraft {
  return draft('DeliveryRequested', {
    deliveryId: id,
    sourceId: source.sourceId,
    kind,
    place: source.place,
    content: safe(content).slice(0, 12_000),
    receiptId: null,
  });
}

/** Every outgoing text passes the scanner once more: a credential in a receipt or a detail is never posted. */
const safe = (text: string): string => redactText(text).text;

function factsOf(state: CaseView, sourceId: string): Pick<SourceFacts, 'sourceId' | 'place'> {
  const s =
    state.sources.find((x) => x.sourceId === sourceId) ?? (state.sources[0] as CaseView['sources'][number]);
  const place: DiscordPlace = {
    guildId: state.guildId,
    channelId: s.channelId,
    threadId: s.threadId,
    messageId: s.messageId,
  };
  return { sourceId: s.sourceId, place };
}

function heldFacts(r: CaseView['linkReviews'][number]): SourceFacts {
  return {
    sourceId: r.sourceId,
    place: { guildId: r.guildId, channelId: r.channelId, threadId: r.threadId, messageId: r.messageId },
    reporterId: r.reporterId,
    text: '',
    attachments: 0,
    createdAt: '',
  };
}

/** Folds drafts as if recorded, so a decision can build on what it just decided. */
function simulate(
  events: readonly RecordedEvent[],
  drafts: readonly EventDraft[],
  caseId: string,
  now: string,
): { state: CaseState; events: RecordedEvent[] } {
  const last = events.at(-1)?.seq ?? 0;
  const recorded = drafts.map(
    (d, i) =>
      ({
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
      }) as RecordedEvent,
  );
  const all = [...events, ...recorded];
  return { state: recorded.reduce(evolveCase, foldCase(events)), events: all };
}
