import { ReadinessField } from './readiness.rules';

/**
 * The clarification dialogue: what the bot says, if anything, when a case is still missing
 * something. It listens: a question names only what is still missing and thanks the reporter for
 * what arrived since the last one; it never sends a message it already sent in the thread; and
 * after two rounds that brought nothing new, the case goes to a reviewer with what is known
 * instead of asking again. Pure: the history is the case's own ClarificationRequested events.
 */
export interface AskedBefore {
  missing: readonly ReadinessField[];
  question: string;
}

export interface DialogueInput {
  caseId: string;
  /** What still blocks the case (soft fields included when something blocks). */
  missing: readonly ReadinessField[];
  /** What the conversation supplies, with a short note for each. */
  found: Partial<Record<ReadinessField, string>>;
  asked: readonly AskedBefore[];
  /** Something new arrived in the conversation since the last question. */
  newSinceLastQuestion: boolean;
  maxQuestions: number;
  /** The case was already handed to a reviewer. */
  handedOff: boolean;
}

export type DialogueStep =
  | { kind: 'ask'; question: string; acknowledged: ReadinessField[] }
  | { kind: 'handoff'; message: string; known: string[]; rounds: number }
  | { kind: 'wait' };

/** Rounds without progress after which a reviewer takes over. */
export const ROUNDS_WITHOUT_PROGRESS = 2;

const ASK: Record<ReadinessField, string> = {
  environment: 'where it happens (app version, browser or OS, web/desktop/mobile)',
  expected: 'what you expected to happen',
  actual: 'what happened instead (the exact error text helps)',
  impact: 'who is affected and how badly (blocked, or is there a workaround)',
  evidence: 'a screenshot, a log excerpt or the steps to reproduce it',
  privacy_scope:
    'the problem described without customer names, credentials or personal data (we hid what looked private)',
  owner: 'which product or repository this is about',
};

const GOT: Record<ReadinessField, string> = {
  environment: 'where it happens',
  expected: 'what you expected',
  actual: 'what happens instead',
  impact: 'who it affects',
  evidence: 'the steps and evidence',
  privacy_scope: 'a shareable description',
  owner: 'which product it is',
};

const list = (items: readonly string[]): string =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join('; ')}; and ${items.at(-1) as string}`;
const plain = (items: readonly string[]): string =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1) as string}`;

/** Consecutive rounds (a question answered by a reply) in which nothing that was missing arrived. */
export function roundsWithoutProgress(
  asked: readonly AskedBefore[],
  missingNow: readonly ReadinessField[],
): number {
  const sets = [...asked.map((a) => a.missing), missingNow];
  let n = 0;
  for (let i = sets.length - 1; i > 0; i--) {
    const before = sets[i - 1] as readonly ReadinessField[];
    const after = sets[i] as readonly ReadinessField[];
    const progressed = before.some((f) => !after.includes(f));
    if (progressed) break;
    n += 1;
  }
  return n;
}

export function questionText(
  caseId: string,
  missing: readonly ReadinessField[],
  acknowledged: readonly ReadinessField[],
  round: number,
): string {
  const thanks =
    acknowledged.length > 0
      ? `Thanks — that gives us ${plain(acknowledged.map((f) => GOT[f]))}.`
      : round === 0
        ? `Thanks — this is case ${caseId}.`
        : `Thanks for the reply — it did not include ${plain(missing.map((f) => GOT[f]))} yet.`;
  const ask =
    round === 0
      ? `Before an engineer can pick it up, could you reply in this thread with ${list(missing.map((f) => ASK[f]))}?`
      : `To start on case ${caseId} we still need ${list(missing.map((f) => ASK[f]))}.`;
  return `${thanks} ${ask}`;
}

export function nextDialogueStep(input: DialogueInput): DialogueStep {
  if (input.missing.length === 0 || input.handedOff) return { kind: 'wait' };
  const last = input.asked.at(-1);
  if (last && !input.newSinceLastQuestion) return { kind: 'wait' };
  const round = input.asked.length;
  const stuck = last ? roundsWithoutProgress(input.asked, input.missing) : 0;
  const known = Object.entries(input.found).map(([f, why]) => `${f}: ${why}`.slice(0, 300));
  const handoff = (rounds: number): DialogueStep => ({
    kind: 'handoff',
    rounds,
    known,
    message:
      `We could not get everything case ${input.caseId} needs in this thread, so a reviewer will take it from here. ` +
      `Known: ${plain(Object.keys(input.found).map((f) => GOT[f as ReadinessField])) || 'only the report'}. ` +
      `Still missing: ${plain(input.missing.map((f) => GOT[f]))}. Reviewers: \`actionable\` in this thread starts the work with what is here.`,
  });
  if (stuck >= ROUNDS_WITHOUT_PROGRESS || round >= input.maxQuestions) return handoff(stuck);
  const acknowledged = last ? last.missing.filter((f) => !input.missing.includes(f)) : [];
  const question = questionText(input.caseId, input.missing, acknowledged, round);
  // Never the same message twice in one thread: if these words were already sent, hand off.
  if (input.asked.some((a) => a.question === question)) return handoff(stuck);
  return { kind: 'ask', question, acknowledged };
}
