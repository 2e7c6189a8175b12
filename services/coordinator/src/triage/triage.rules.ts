import { Classification } from '@caseloop/contracts';
import { extractSignatures } from '@caseloop/identity';

/**
 * Triage by rules: each kind of report has cues; the strongest kind wins, with the cues as
 * reasons. Rules are deliberately readable — an operator must be able to tell from the ledger
 * why a report became product feedback instead of a bug.
 */
export interface TriageInput {
  /** The case's source texts, oldest first (already sanitized: rules never need private text). */
  texts: readonly string[];
  /** How much of the original text survived privacy redaction (0..1). */
  keptRatio: number;
}

export interface TriageResult {
  classification: Classification;
  confidence: number;
  reasons: string[];
}

/** A pluggable classifier (e.g. a model) may replace the rules; its answer is recorded as `by: classifier`. */
export interface CaseClassifierPort {
  classify(input: TriageInput): Promise<TriageResult | null>;
}

type Cue = [RegExp, string];

const REGRESSION: Cue[] = [
  [/\b(used to work|worked (fine |before|last week|yesterday|until)|was working)/i, 'it used to work'],
  [
    /\b(since|after) (the |last |this )?(update|upgrade|release|deploy|version|v?\d+\.\d+)/i,
    'started after an update',
  ],
  [/\b(updating|upgrading|updated|upgraded) to\b/i, 'started after an update'],
  [/\b(stopped working|no longer|not anymore|anymore)\b/i, 'stopped working'],
  [/\bregression\b/i, 'called a regression'],
];
const BUG: Cue[] = [
  [/\b(crash\w*|freez\w*|hang(s|ing)?|stuck|blank|broken|bug|glitch)\b/i, 'a failure symptom'],
  [
    /\b(error|exception|fails?|failed|failing|doesn'?t work|does not work|not working|can'?t|cannot|unable|wrong|missing|lost)\b/i,
    'something does not work',
  ],
  [/\b(duplicat\w*|twice|double)\b/i, 'a duplication symptom'],
  [
    /\b(cuts? off|truncat\w*|garbled|mangled|revert\w*|snaps? back|too slow|laggy|times? out|timed out|empty|unreadable)\b/i,
    'a visible defect',
  ],
];
const FEEDBACK: Cue[] = [
  [
    /\bfeature request\b|\b(would|it'?d) (be|love)\b.{0,40}\b(great|nice|cool|helpful|useful|awesome)|\bwould love\b/i,
    'asks for something new',
  ],
  [
    /\b(please (add|support)|could you (add|support)|can you add|support for|it would be|i wish|suggestion|idea:)/i,
    'suggests a change',
  ],
  [/\b(should (follow|support|allow|have)|make it possible|option to)\b/i, 'proposes a behaviour'],
  [
    /\b(could|can) [\w ]{1,30}?\b(follow|support|allow|add|remember|offer)\b[^.?!\n]*\?/i,
    'asks whether it could behave differently',
  ],
];
const QUESTION: Cue[] = [
  [
    /^\s*(how|where|what|which|why|is it possible|is there|can i|could i|do you|does|am i)\b[^\n]*\?/im,
    'asks a question',
  ],
  [/\b(how do i|where do i|is there a way|is it possible)\b/i, 'asks how to'],
];
const ACCESS: Cue[] = [
  [
    /\b(permission|permissions|access denied|not authori[sz]ed|forbidden|locked out|no access|can'?t access|lost access)\b/i,
    'about access or permissions',
  ],
  [/\b(role|admin|guest|invite|invitation|sso|seat)\b/i, 'about roles or membership'],
];

const hits = (cues: Cue[], text: string): string[] => [
  ...new Set(cues.filter(([re]) => re.test(text)).map(([, why]) => why)),
];

/** Below this share of surviving text, the report is mostly private context: a human must look. */
export const MIN_KEPT_RATIO = 0.5;

export function classifyByRules(input: TriageInput): TriageResult {
  const text = input.texts.join('\n\n');
  if (input.keptRatio < MIN_KEPT_RATIO) {
    return {
      classification: 'private_context',
      confidence: 0.9,
      reasons: [
        `only ${Math.round(input.keptRatio * 100)}% of the report is shareable after privacy redaction`,
      ],
    };
  }
  const sig = extractSignatures(text);
  const technical = sig.exception.size + sig.error_code.size + sig.frame.size + sig.http_status.size;
  const regression = hits(REGRESSION, text);
  const bug = hits(BUG, text);
  const feedback = hits(FEEDBACK, text);
  const question = hits(QUESTION, text);
  const access = hits(ACCESS, text);
  const has401or403 = sig.http_status.has('401') || sig.http_status.has('403');
  if (has401or403) access.push('a 401/403 status');

  const score: Record<Exclude<Classification, 'private_context'>, number> = {
    // A regression is a bug with a history: it outranks the bug it also is.
    regression:
      regression.length > 0 && (bug.length > 0 || technical > 0)
        ? bug.length + (technical > 0 ? 2 : 0) + regression.length
        : 0,
    bug: bug.length + (technical > 0 ? 2 : 0),
    feedback: feedback.length * 2,
    question: question.length > 0 && bug.length === 0 && technical === 0 ? 1 + question.length : 0,
    access: access.length >= 2 || (access.length === 1 && has401or403) ? 1 + access.length : 0,
  };
  // Feature requests often mention a failure ("I can't bulk edit"): an explicit ask wins unless there is a trace.
  if (feedback.length > 0 && technical === 0) score.feedback += 2;
  const order: Array<keyof typeof score> = ['regression', 'access', 'bug', 'feedback', 'question'];
  let best: keyof typeof score = 'bug';
  for (const k of order) if (score[k] > score[best]) best = k;
  const total = Object.values(score).reduce((a, b) => a + b, 0);
  const reasons: string[] = [];
  const cues: Record<keyof typeof score, string[]> = { regression, bug, feedback, question, access };
  for (const c of cues[best]) reasons.push(c);
  if (technical > 0 && (best === 'bug' || best === 'regression'))
    reasons.push(`${technical} technical signature(s): error, exception, status or stack frame`);
  if (total === 0) reasons.push('no cue matched; treated as a bug report until someone says otherwise');
  return {
    classification: best,
    confidence: total === 0 ? 0.3 : Math.round((score[best] / total) * 100) / 100,
    reasons: reasons.slice(0, 20),
  };
}

/** Kinds the coordinator may dispatch without a human turning them into work. */
export const DISPATCHABLE: readonly Classification[] = ['bug', 'regression'];
