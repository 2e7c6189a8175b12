import type { IdentityDecision } from '../identity-index';
import { applyJudgement } from './judged.decision';
import type { Judgement } from './judgement.port';

const offline = (decision: IdentityDecision['decision']): IdentityDecision => ({
  decision,
  matchedWith: 'C-near',
  confidence: decision === 'link' ? 0.8 : decision === 'review' ? 0.5 : 0.2,
  reasons: ['offline'],
  alternatives: [],
});
const said = (verdict: Judgement['verdict'], caseId: string | null = null): Judgement => ({
  route: 'openai:m@r',
  promptHash: 'h',
  verdict,
  caseId,
  rationale: 'because',
  fallback: null,
  durationMs: 1,
});
const none = () => [] as string[];

/** A model moves the offline decision one step at most, and never past a conflicting signature. */
describe('applyJudgement', () => {
  it.each([
    ['new', 'same', 'review'],
    ['review', 'same', 'link'],
    ['link', 'same', 'link'],
    ['new', 'different', 'new'],
    ['review', 'different', 'new'],
    ['link', 'different', 'review'],
    ['new', 'unsure', 'new'],
    ['review', 'unsure', 'review'],
  ] as const)('offline %s, model %s: %s', (before, verdict, after) => {
    const d = applyJudgement(offline(before), said(verdict, verdict === 'same' ? 'C-near' : null), none);
    expect(d.decision).toBe(after);
  });

  it('a "same" for a case with conflicting signatures goes to a person, whatever the offline score', () => {
    const d = applyJudgement(offline('review'), said('same', 'C-near'), () => ['version 4.2 vs 5.0']);
    expect(d).toMatchObject({ decision: 'review', matchedWith: 'C-near' });
    expect(d.reasons).toContain('conflicting signatures: a reviewer decides');
  });

  it('a fallback leaves the offline decision and says so', () => {
    const d = applyJudgement(
      offline('review'),
      { ...said('unsure'), fallback: { reason: 'timeout', detail: 'no answer' } },
      none,
    );
    expect(d.decision).toBe('review');
    expect(d.reasons.at(-1)).toMatch(/model fallback \(timeout\)/);
  });
});
