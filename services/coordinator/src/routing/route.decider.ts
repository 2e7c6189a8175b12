import { EventData, RecordedEvent } from '@caseloop/contracts';
import { IdentityDecision, Judgement } from '@caseloop/identity';
import { CaseCommand, CaseRefusalCode, SourceFacts } from '../cases/case.commands';
import { caseIdForSource, reviewIdForSource } from '../cases/case.ids';

export type Routed = EventData<'SourceRouted'>;

/** What routing knows about the open cases when a report arrives. */
export interface RouteInput {
  facts: SourceFacts;
  /** The case whose thread the report was written in, if it was written in one. */
  threadCase: string | null;
  /** The identity index's answer for the report's sanitized text. */
  match: Pick<IdentityDecision, 'decision' | 'matchedWith' | 'confidence' | 'reasons'>;
  /** A judgement route's answer about a review-band match, when one was asked. */
  judgement?: Judgement | null;
}

/**
 * Where a report goes, decided once per source and recorded as SourceRouted: into the case of
 * its thread, linked to a matching case, held for a human, or a case of its own. Pure; the case
 * id of a new case derives from the source, so racing routers agree on it.
 */
export function decideRoute({ facts, threadCase, match, judgement = null }: RouteInput): Routed {
  if (threadCase) {
    return {
      sourceId: facts.sourceId,
      caseId: threadCase,
      outcome: 'thread',
      confidence: 1,
      matchedWith: threadCase,
      reasons: [`a reply in the thread of case ${threadCase}`],
      judgement: null,
    };
  }
  const base = {
    sourceId: facts.sourceId,
    confidence: match.confidence,
    matchedWith: match.matchedWith,
    reasons: match.reasons.slice(0, 20),
    judgement: judgement && recordedJudgement(judgement),
  };
  if (match.decision === 'link' && match.matchedWith)
    return { ...base, caseId: match.matchedWith, outcome: 'linked' };
  if (match.decision === 'review' && match.matchedWith)
    return { ...base, caseId: match.matchedWith, outcome: 'held' };
  return { ...base, caseId: caseIdForSource(facts.sourceId, facts.createdAt), outcome: 'opened' };
}

/** The case command a routing amounts to: the second write, derived from the first. */
export function commandForRoute(routed: Routed, facts: SourceFacts): CaseCommand {
  const identity = { confidence: routed.confidence, reasons: routed.reasons };
  switch (routed.outcome) {
    case 'opened':
      return { kind: 'open_case', caseId: routed.caseId, source: facts, identity };
    case 'held':
      return { kind: 'hold_source', source: facts, reviewId: reviewIdForSource(facts.sourceId), identity };
    case 'linked':
    case 'thread':
      return {
        kind: 'link_source',
        source: facts,
        via: routed.outcome === 'thread' ? 'thread' : 'semantic_match',
        identity,
      };
  }
}

/** The case closed between matching and joining: the report is never dropped, it opens its own case. */
export function rerouteRefused(routed: Routed, facts: SourceFacts, refusal: CaseRefusalCode): Routed {
  return {
    sourceId: facts.sourceId,
    caseId: caseIdForSource(facts.sourceId, facts.createdAt),
    outcome: 'opened',
    confidence: routed.confidence,
    matchedWith: routed.matchedWith,
    reasons: [...routed.reasons.slice(0, 19), `case ${routed.caseId} could not take it (${refusal})`],
    judgement: routed.judgement,
  };
}

/** A reviewer said a held report is a different problem: it opens a case of its own. */
export function routeDifferent(
  facts: SourceFacts,
  confidence: number,
  settled: RecordedEvent<'LinkReviewSettled'>,
): Routed {
  return {
    sourceId: facts.sourceId,
    caseId: caseIdForSource(facts.sourceId, facts.createdAt),
    outcome: 'opened',
    confidence,
    matchedWith: settled.aggregateId,
    reasons: [
      `a reviewer said link review ${settled.data.reviewId} is a different case from ${settled.aggregateId}`,
    ],
    judgement: null,
  };
}

/** The routing that counts for a source: its last SourceRouted. */
export function lastRouted(events: readonly RecordedEvent[]): RecordedEvent<'SourceRouted'> | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as RecordedEvent;
    if (e.type === 'SourceRouted') return e;
  }
  return null;
}

/** A judgement as the event records it (bounded fields; the rationale is the model's, over sanitized briefs). */
function recordedJudgement(j: Judgement): NonNullable<Routed['judgement']> {
  return {
    route: j.route.slice(0, 200),
    promptHash: j.promptHash,
    verdict: j.verdict,
    caseId: j.caseId,
    rationale: j.rationale.slice(0, 600),
    fallback: j.fallback && { reason: j.fallback.reason, detail: j.fallback.detail.slice(0, 300) },
    durationMs: Math.max(0, Math.round(j.durationMs)),
  };
}
