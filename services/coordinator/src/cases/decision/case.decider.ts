import { isTerminal, receiptThreads, threadKeyOf } from '@caseloop/case-model';
import { draft, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { caseTitle, privacyScope, PrivacyScope } from '../../triage/privacy-scope';
import { CaseCommand, CaseContext, CaseDecision, IdentityEvidence, SourceFacts } from '../case.commands';
import { deliveryId } from '../case.ids';
import { CaseRecord, DecisionState, simulate } from './case-record.evolve';
import { dispatch, idleTask } from './dispatch.rules';
import { gate, pendingGate, routedReceipt, staleProof } from './gate.rules';
import { awaitReview, humanDecision } from './review.rules';
import { delivery, receiptDelivery, say, toFirst } from './case.wording';

/**
 * The coordinator's case decider: `decide(command, state, context) → events`. Pure: the state is
 * the case folded once from the ledger (`foldRecord`), time and source texts come in with the
 * context. Because the handler runs it under optimistic concurrency on the case, and every rule
 * looks at the case's own history first, a second task, a second opening or a second receipt
 * routing cannot be produced by two racing handlers.
 */
export function decide(command: CaseCommand, state: DecisionState, ctx: CaseContext): CaseDecision {
  // The privacy scope of the case's sources, computed at most once per command.
  let computed: PrivacyScope | undefined = ctx.scope;
  const scope = () => (computed ??= privacyScope(ctx.sources, ctx.privateMarkers));
  if (command.kind === 'observe' && command.event.aggregate !== 'case')
    return refuse('not_a_case_event', `${command.event.type} is not a case event`);
  if (command.kind === 'open_case')
    return openCase(state, command.caseId, command.source, command.identity, ctx, scope);
  if (state.status === 'none') return refuse('case_not_found', 'no such case');
  switch (command.kind) {
    case 'link_source':
      return linkSource(state, command.source, command.via, command.identity, ctx, scope);
    case 'hold_source':
      return holdSource(state, command.source, command.reviewId, command.identity);
    case 'observe':
      return observe(state, command.event, ctx, scope);
    case 'reexamine':
      return ok([...pendingGate(state, ctx), ...awaitReview(state, ctx), ...idleTask(state, ctx)]);
  }
}

type Scope = () => PrivacyScope;
const ok = (events: EventDraft[]): CaseDecision => ({ ok: true, events });
const refuse = (code: Extract<CaseDecision, { ok: false }>['code'], message: string): CaseDecision => ({
  ok: false,
  code,
  message,
});

function openCase(
  state: DecisionState,
  caseId: string,
  source: SourceFacts,
  identity: IdentityEvidence,
  ctx: CaseContext,
  scope: Scope,
): CaseDecision {
  if (state.status !== 'none') {
    return state.sources.some((s) => s.sourceId === source.sourceId)
      ? ok([])
      : refuse('case_exists', `case ${state.caseId} is already open`);
  }
  const titled = ctx.sources.length > 0 ? scope() : privacyScope([source], ctx.privateMarkers);
  const opened = draft('CaseOpened', {
    sourceId: source.sourceId,
    place: source.place,
    reporterId: source.reporterId,
    title: caseTitle(titled.texts[0] ?? ''),
    confidence: identity.confidence,
    reasons: identity.reasons.slice(0, 20),
  });
  const after = simulate(state, [opened], caseId, ctx.now) as CaseRecord;
  const step = dispatch(after, scope(), ctx, true);
  const drafts: EventDraft[] = [opened, ...step.drafts];
  if (step.next.kind !== 'question') {
    const id = deliveryId('ack', source.sourceId);
    drafts.push(delivery(source, 'ack', id, say.acknowledged(caseId, step.next.content)));
  }
  return ok(drafts);
}

function linkSource(
  state: CaseRecord,
  source: SourceFacts,
  via: 'semantic_match' | 'thread',
  identity: IdentityEvidence,
  ctx: CaseContext,
  scope: Scope,
): CaseDecision {
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
  return ok(joined(state, linked, source, via !== 'thread', ctx, scope));
}

/** A source joined: tell it (unless it is a reply in the thread), catch it up on a routed receipt, re-evaluate. */
function joined(
  state: CaseRecord,
  linked: EventDraft<'SourceLinked'>,
  source: Pick<SourceFacts, 'sourceId' | 'place'>,
  announce: boolean,
  ctx: CaseContext,
  scope: Scope,
): EventDraft[] {
  const drafts: EventDraft[] = [linked];
  if (announce) {
    const id = deliveryId('linked', source.sourceId);
    drafts.push(delivery(source, 'linked', id, say.joined(state.caseId, state.title)));
  }
  const after = simulate(state, drafts, state.caseId, ctx.now) as CaseRecord;
  const routed = routedReceipt(after);
  // A reply in a thread that already has the receipt does not get another one.
  const covered = receiptThreads(state).some(
    (x) => threadKeyOf(x) === (source.place.threadId ?? source.place.messageId),
  );
  if (routed && !isTerminal(after.status) && !covered) drafts.push(receiptDelivery(source, routed));
  drafts.push(...dispatch(after, scope(), ctx, false).drafts);
  return drafts;
}

function holdSource(
  state: CaseRecord,
  source: SourceFacts,
  reviewId: string,
  identity: IdentityEvidence,
): CaseDecision {
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
      say.held(state.caseId, state.title, reviewId),
    ),
  ]);
}

function observe(state: CaseRecord, e: RecordedEvent, ctx: CaseContext, scope: Scope): CaseDecision {
  switch (e.type) {
    case 'LinkReviewSettled': {
      const review = state.linkReviews.find((r) => r.reviewId === e.data.reviewId);
      if (!review || e.data.verdict !== 'same' || state.sources.some((s) => s.sourceId === review.sourceId))
        return ok([]);
      if (isTerminal(state.status)) return ok([]);
      const place = {
        guildId: review.guildId,
        channelId: review.channelId,
        threadId: review.threadId,
        messageId: review.messageId,
      };
      const source = ctx.sources.find((s) => s.sourceId === review.sourceId) ?? {
        sourceId: review.sourceId,
        place,
      };
      const linked = draft('SourceLinked', {
        sourceId: review.sourceId,
        place: source.place,
        reporterId: review.reporterId,
        via: 'link_review',
        confidence: review.confidence,
        reasons: [`a reviewer settled link review ${review.reviewId}: same case`],
      });
      return ok(joined(state, linked, source, true, ctx, scope));
    }
    case 'CaseMadeActionable':
      if (isTerminal(state.status)) return ok([]);
      return ok(dispatch(state, scope(), ctx, false).drafts);
    case 'ChecksCompleted':
    case 'TargetRevisionChecked':
      return ok(staleProof(state));
    case 'ReceiptBuilt':
      return ok(gate(state, { seq: e.seq, data: e.data }, ctx));
    case 'DeliveryConfirmed':
    case 'DeliveryRefused':
      return ok(awaitReview(state, ctx));
    case 'BlockerRaised': {
      if (isTerminal(state.status) || e.data.taskId !== state.taskId) return ok([]);
      const id = deliveryId('blocker', state.caseId, String(e.seq));
      return ok(toFirst(state, 'blocker', id, say.blocked(state.caseId, e.data.kind, e.data.detail)));
    }
    case 'ReviewerDecided':
      return ok(humanDecision(state, e.data));
    default:
      return ok([]);
  }
}
