import { IdentityDecision, IdentityIndex, IdentityQuery } from '../identity-index';
import { Judgement, judgeSameCause, JudgeHooks, ModelAdapter } from './judgement.port';

/**
 * The offline decision, refined by a model's judgement. The offline matcher retrieves; the model
 * only decides among the head it was shown. Deterministic guards stay: a candidate with
 * conflicting signatures is never linked without a person, and a `different` never overrides an
 * offline link silently (it becomes a review). A fallback leaves the offline decision as it was.
 */
export interface JudgedDecision {
  decision: IdentityDecision;
  /** Null when no model was asked (nothing plausible to ask about). */
  judgement: Judgement | null;
}

export interface JudgedOptions {
  /** Candidates shown to the model (best first). */
  k?: number;
  /** Below this offline confidence a candidate is not worth a model call (default: the config's `judgementAskFloor`). */
  askFloor?: number;
  /** Briefs of open cases, by case id (sanitized texts the index was built from). */
  briefOf: (caseId: string) => string;
  hooks?: JudgeHooks;
}

export function applyJudgement(
  offline: IdentityDecision,
  judgement: Judgement | null,
  conflictsOf: (caseId: string) => readonly string[],
): IdentityDecision {
  if (!judgement || judgement.fallback || judgement.verdict === 'unsure') {
    if (judgement?.fallback)
      return {
        ...offline,
        reasons: [
          ...offline.reasons,
          `model fallback (${judgement.fallback.reason}): offline decision stands`,
        ].slice(0, 20),
      };
    return offline;
  }
  const why = `model ${judgement.route}: ${judgement.verdict}${judgement.caseId ? ` ${judgement.caseId}` : ''}`;
  if (judgement.verdict === 'same' && judgement.caseId) {
    const guarded = conflictsOf(judgement.caseId).length > 0;
    // One step at most: a report the offline matcher scored below the review band goes to a person
    // on a model's word, never straight onto a case.
    const belowBand = offline.decision === 'new';
    return {
      ...offline,
      decision: guarded || belowBand ? 'review' : 'link',
      matchedWith: judgement.caseId,
      reasons: [
        why,
        ...(guarded ? ['conflicting signatures: a reviewer decides'] : []),
        ...(belowBand && !guarded ? ['offline score below the review band: a reviewer confirms'] : []),
        ...offline.reasons,
      ].slice(0, 20),
    };
  }
  // `different` for every candidate shown.
  return {
    ...offline,
    decision: offline.decision === 'link' ? 'review' : 'new',
    reasons: [why, ...offline.reasons].slice(0, 20),
  };
}

export async function decideWithJudge(
  index: IdentityIndex,
  query: IdentityQuery,
  adapter: ModelAdapter,
  opts: JudgedOptions,
): Promise<JudgedDecision> {
  const offline = index.decide(query);
  const floor = opts.askFloor ?? Math.min(index.config.judgementAskFloor, index.config.reviewThreshold);
  const cands = index.candidates(query, opts.k ?? 3).filter((c) => c.confidence >= floor);
  if (cands.length === 0) return { decision: offline, judgement: null };
  const judgement = await judgeSameCause(
    adapter,
    {
      report: query.text,
      candidates: cands.map((c) => ({ caseId: c.caseId, brief: opts.briefOf(c.caseId) })),
    },
    opts.hooks,
  );
  const conflicts = new Map(cands.map((c) => [c.caseId, c.conflicts]));
  return { decision: applyJudgement(offline, judgement, (id) => conflicts.get(id) ?? []), judgement };
}
