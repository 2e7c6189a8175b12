import { readinessField } from '@caseloop/contracts';
import { extractSignatures } from '@caseloop/identity';

/** The fields a report needs before it is actionable: one list, the contract's. */
export const READINESS_FIELDS = readinessField.options;
export type ReadinessField = (typeof READINESS_FIELDS)[number];

export interface ChannelRoute {
  channelId: string;
  /** The repository id (from the repositories file) reports in this channel are about. */
  repository: string | null;
  owner: string | null;
}

export interface ReadinessInput {
  /** Sanitized source texts of the case, oldest first. */
  texts: readonly string[];
  attachments: number;
  keptRatio: number;
  route: ChannelRoute | null;
  /** Configured repository ids: a reply naming one settles the owner. */
  repositories: readonly { id: string; owner: string }[];
  /** The classification says the case is a regression: "it used to work" is the expected behaviour. */
  regression: boolean;
}

export interface ReadinessResult {
  /** What blocks the case (empty when a developer could start); soft fields ride along when non-empty. */
  missing: ReadinessField[];
  /** Everything not found, soft fields included. */
  unknown: ReadinessField[];
  found: Partial<Record<ReadinessField, string>>;
  owner: string | null;
  repository: string | null;
}

const ENV =
  /\b(ios|android|iphone|ipad|pixel|galaxy|windows|win1[01]|mac ?os|macbook|linux|ubuntu|chrome|chromium|firefox|safari|edge|browser|desktop app|mobile app|web app|app version|node ?\d+|python ?3|prod(uction)?|staging)\b/i;
const EXPECTED =
  /\b(expected|expect|should|supposed to|instead of|used to|docs say|documented|works (fine |perfectly )?(in|on|with|for)|worked (before|fine|in|on)|meant to|want(ed)? to|downgrad\w*|roll(ed)? back|works? again|last working)\b/i;
const ACTUAL =
  /\b(error|crash\w*|fails?|failed|shows?|showing|displays?|returns?|returned|gets?|got|getting|blank|stuck|freez\w*|hang\w*|nothing happens|disappear\w*|missing|wrong|broken|lost|twice|duplicat\w*|instead|doesn'?t|does not|won'?t|can'?t|cannot|cuts? off|cut off|truncat\w*|only (shows?|has|returns?)|revert\w*|snaps? back|jumps?|resets?|ignores?|empty|garbled|mangled|slow|laggy|times? out|timed out|stopped|stops|no longer)\b/i;
const IMPACT =
  /\b(block\w*|all (our )?(users|customers)|every(one| user| customer)|whole team|our team|customers?|users? (report|are)|production|prod\b|urgent|critical|data loss|lost (my|our)|security|can'?t (work|use)|unable to|workaround|locked out|annoying|painful|every time|always|another user|other users|others have|same problem|hard to (read|use|work|see)|unusable|can'?t use|all but one)\b/i;
const EVIDENCE =
  /\b(screenshot|screen ?shot|screen recording|video|log|logs|trace|traceback|stack|console|network tab|devtools|har file|steps to reproduce|repro|to reproduce|reproduce|reproducible)\b|^\s*\d[.)]\s|(^|\n|[.;:]\s*)\s*(steps?|how to reproduce|str)\s*[:-]/im;
/** What the reporter tried, or a sequence of observations: evidence a developer can act on. */
const TRIED =
  /\b(restart\w*|reinstall\w*|reboot\w*|re-?download\w*|clear\w* (the )?(cache|data)|disabl\w*|downgrad\w*|roll(ed)? back)\b[^.\n]{0,60}\b(didn'?t|did not|doesn'?t|does not|no|not|makes? it|fix\w*|help\w*|change\w*|works?)\b|\bonce I\b|\b(day|step) \d\b\s*:|^\s*(open|go to|click|tap|start|run)\b[^.\n]{0,60}:/im;
/** Steps written as a sequence: "open the shop, add two apples, open the cart" or "go to X > click Y". */
const STEP_SEQUENCE =
  /\b(open|go to|click|tap|add|select|enter|type|press|run|start|navigate|log ?in)\b[^.\n]{2,80}(,|;|->|→|>|\bthen\b)\s*(and\s+)?\b(open|go to|click|tap|add|select|enter|type|press|run|start|navigate|check|look|see|view)\b/i;
/** Concrete observed values set against expected ones: "€9.40 instead of €12.90", "shows 3, should be 5". */
const OBSERVED_VALUES =
  /([€$£¥]\s?\d+(?:[.,]\d+)?|\d+(?:[.,]\d+)?\s?(?:€|\$|£|%|ms|s|mb|gb|kb))[^.\n]{0,40}\b(instead of|rather than|but (?:should|expected)|not|vs\.?|versus)\b[^.\n]{0,20}([€$£¥]\s?\d|\d)/i;

/**
 * A case is actionable when a developer could start without asking anything: where it happens,
 * what was expected, what happened, who it hurts, some evidence, a clear privacy scope and an
 * owner. Each field is judged over all of the case's sources, so a reply in the thread can fill
 * in what the first report lacked.
 */
export function assessReadiness(input: ReadinessInput): ReadinessResult {
  const text = input.texts.join('\n\n');
  const sig = extractSignatures(text);
  const found: Partial<Record<ReadinessField, string>> = {};
  const env = text.match(ENV);
  if (env) found.environment = `mentions ${env[0].toLowerCase()}`;
  else if (sig.version.size > 0) found.environment = `version ${[...sig.version][0]}`;
  else if (sig.url.size > 0) found.environment = 'a URL of the affected page';
  const exp = text.match(EXPECTED);
  if (exp) found.expected = `says what should happen ("${exp[0].toLowerCase()}")`;
  else if (input.regression) found.expected = 'a regression: the earlier behaviour is expected';
  const act = text.match(ACTUAL);
  if (act || sig.exception.size > 0 || sig.error_code.size > 0 || sig.http_status.size > 0)
    found.actual = 'describes what happens';
  const imp = text.match(IMPACT);
  if (imp) found.impact = `states impact ("${imp[0].toLowerCase()}")`;
  const technical =
    sig.exception.size + sig.frame.size + sig.error_code.size + sig.http_status.size + sig.quoted.size;
  if (input.attachments > 0) found.evidence = `${input.attachments} attachment(s)`;
  else if (technical > 0) found.evidence = 'error text, status or stack trace';
  else if (EVIDENCE.test(text) || STEP_SEQUENCE.test(text)) found.evidence = 'steps, logs or screenshots';
  else if (TRIED.test(text)) found.evidence = 'what was tried and what it changed';
  else if (OBSERVED_VALUES.test(text)) found.evidence = 'the observed and the expected values';
  if (input.keptRatio >= 0.5)
    found.privacy_scope =
      input.keptRatio < 1 ? 'private parts removed; the rest is shareable' : 'nothing private found';

  let repository = input.route?.repository ?? null;
  let owner = input.route?.owner ?? null;
  if (!repository) {
    const lower = text.toLowerCase();
    const named = input.repositories.find((r) =>
      new RegExp(`(^|[^a-z0-9_-])${r.id.toLowerCase()}([^a-z0-9_-]|$)`).test(lower),
    );
    if (named) {
      repository = named.id;
      owner = owner ?? named.owner;
    }
  }
  if (repository) {
    owner = owner ?? input.repositories.find((r) => r.id === repository)?.owner ?? repository;
    found.owner = `${owner} (${repository})`;
  }
  const missing = READINESS_FIELDS.filter((f) => !(f in found));
  // Where it happens and whom it hurts help an engineer prioritise and reproduce, but a report
  // with what happens, what was expected and something to reproduce it from is enough to start
  // (the channel already names the product): they are asked for together with a field that
  // blocks, never alone.
  const blocking = missing.filter((f) => !SOFT.includes(f));
  return { missing: blocking.length > 0 ? missing : [], found, owner, repository, unknown: missing };
}

/** A readiness judgement route's verdict over the whole conversation (see libs/identity readiness.port). */
export interface ReadinessVerdict {
  /** `kind:model@name` of the route that answered. */
  route: string;
  supplied: readonly ('environment' | 'expected' | 'actual' | 'steps' | 'impact' | 'evidence')[];
}

/** The fields a judgement route decides; privacy scope and owner stay with the rules and the routes. */
const JUDGED: readonly ReadinessField[] = ['environment', 'expected', 'actual', 'impact', 'evidence'];

/**
 * The offline result with a route's verdict in place of the rules' for what the conversation
 * supplies (steps to reproduce count as evidence): a route reads what the patterns miss (other
 * words, other languages) and what they match by accident. Privacy scope and owner are unchanged.
 */
export function withJudgement(offline: ReadinessResult, verdict: ReadinessVerdict): ReadinessResult {
  const found: Partial<Record<ReadinessField, string>> = {};
  for (const f of READINESS_FIELDS) {
    if (!JUDGED.includes(f)) {
      if (offline.found[f] !== undefined) found[f] = offline.found[f];
      continue;
    }
    const supplied =
      verdict.supplied.includes(f as ReadinessVerdict['supplied'][number]) ||
      (f === 'evidence' && verdict.supplied.includes('steps'));
    if (supplied) found[f] = offline.found[f] ?? `judged supplied by ${verdict.route}`;
  }
  const missing = READINESS_FIELDS.filter((f) => !(f in found));
  const blocking = missing.filter((f) => !SOFT.includes(f));
  return { ...offline, found, missing: blocking.length > 0 ? missing : [], unknown: missing };
}

/** Fields worth asking for only when a question is going out anyway. */
export const SOFT: readonly ReadinessField[] = ['environment', 'impact'];

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

/** One clear question for the reporter, covering everything still missing, in one message. */
export function clarificationQuestion(caseId: string, missing: readonly ReadinessField[]): string {
  const items = missing.map((f) => ASK[f]);
  const list =
    items.length === 1
      ? (items[0] as string)
      : `${items.slice(0, -1).join('; ')}; and ${items.at(-1) as string}`;
  return `Thanks — this is case ${caseId}. Before an engineer can pick it up, could you reply in this thread with ${list}?`;
}
