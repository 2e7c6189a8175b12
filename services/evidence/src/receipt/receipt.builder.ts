import type { CheckResult, EventData, OutputExcerpt, RecordedEvent } from '@caseloop/contracts';
import { redactText } from '@caseloop/privacy';
import { evidenceLinkUrl } from '../storage/evidence-link.policy';
import { checkLogArtifactId } from '../validation/evidence.decider';
import {
  attemptsOf,
  duration,
  escalationOf,
  excerptsOf,
  ReceiptAttempt,
  ReceiptStage,
  stagesOf,
  usageLine,
} from './receipt.facts';

export type ReceiptData = EventData<'ReceiptBuilt'>;

/**
 * Links to evidence are minted by the evidence service (the only holder of S3 credentials) when
 * a receipt is delivered, because a presigned link is short-lived and must not sit in the ledger.
 */
export const evidenceLinkPlaceholder = (key: string): string => `{{evidence-link:${key}}}`;
const PLACEHOLDER = /\{\{evidence-link:([A-Za-z0-9/_-]{1,1024})\}\}/g;

export async function resolveEvidenceLinks(
  rendered: string,
  mint: (key: string) => Promise<string>,
): Promise<string> {
  const keys = [...new Set([...rendered.matchAll(PLACEHOLDER)].map((m) => m[1] as string))];
  const links = new Map(await Promise.all(keys.map(async (k) => [k, await mint(k)] as const)));
  return rendered.replace(PLACEHOLDER, (_, k: string) => `<${links.get(k) ?? k}>`);
}

const MAX_CHECKS = 25;
const MAX_CAPTURES = 10;
const MAX_EVIDENCE = 20;
const MAX_RENDERED = 6000;
const MAX_ATTEMPTS = 8;
const TRUNCATED = '…(truncated; full data in the ledger)';

type Ev<T extends RecordedEvent['type']> = Extract<RecordedEvent, { type: T }>;
const isType =
  <T extends RecordedEvent['type']>(type: T) =>
  (e: RecordedEvent): e is Ev<T> =>
    e.type === type;

/**
 * The receipt of the latest passing checks, from ledger events only. It reads the worker's checks,
 * its own client, review and storage events, and reviewers' privacy approvals (a digest, nothing
 * else); never a report's text, a title or a thread. Null while there is no passing check run.
 */
export function buildReceipt(
  events: readonly RecordedEvent[],
  at: {
    receiptId: string;
    builtAt: string;
    /** Stable link base (the evidence service's public URL); placeholders without it. */ linkBase?:
      string | null;
  },
): ReceiptData | null {
  const checks = events
    .filter(isType('ChecksCompleted'))
    .filter((e) => e.data.passed)
    .at(-1);
  if (!checks) return null;
  const { taskId, revision } = checks.data;
  const afterChecks = events.filter((e) => e.seq > checks.seq);

  const startedIndex = afterChecks.findLastIndex(
    (e) => e.type === 'ClientValidationStarted' && e.data.revision === revision,
  );
  const phase = startedIndex < 0 ? [] : afterChecks.slice(startedIndex);
  const started = phase.find(isType('ClientValidationStarted'));
  const completed = phase
    .filter(isType('ClientValidationCompleted'))
    .find((e) => e.data.revision === revision);
  const voided = phase.filter(isType('CaptureVoided'));
  const captures = phase
    .filter(isType('CaptureTaken'))
    .filter(
      (c) =>
        completed?.data.captureIds.includes(c.data.captureId) &&
        !voided.some((v) => v.data.captureId === c.data.captureId),
    );

  const approved = new Set(events.filter(isType('PrivacyApproved')).map((e) => e.data.artifactSha256));
  const reviews = new Map(
    afterChecks.filter(isType('ArtifactReviewed')).map((e) => [e.data.artifactId, e.data]),
  );
  const ofRevision = afterChecks
    .filter(isType('ArtifactStored'))
    .filter((e) => e.data.revision === revision && e.data.kind !== 'receipt');
  // An empty output proves nothing and every empty output has the same digest; the check result
  // already records that the check printed nothing, so the receipt says so on the check's line.
  const stored = dedupeBy(
    ofRevision.filter((e) => e.data.bytes > 0),
    (e) => e.data.key,
  );
  const evidence = stored.map((e) => ({
    key: e.data.key,
    sha256: e.data.sha256,
    kind: e.data.kind,
    shareable: reviews.get(e.data.artifactId)?.decision !== 'needs_human' || approved.has(e.data.sha256),
  }));
  const lost = afterChecks
    .filter(isType('ArtifactDurabilityFailed'))
    .filter((e) => e.data.key.includes(`/${revision}/`));

  const client: ReceiptData['client'] = completed
    ? {
        flow: started?.data.flow ?? null,
        outcome: completed.data.outcome,
        captureIds: captures.map((c) => c.data.captureId),
      }
    : { flow: null, outcome: 'not_declared', captureIds: [] };
  const outcome: ReceiptData['outcome'] =
    lost.length > 0 || client.outcome === 'failed'
      ? 'blocked'
      : client.outcome === 'blocked'
        ? 'implemented_client_blocked'
        : 'pr_ready';

  const risks: string[] = [];
  if (completed?.data.outcome === 'blocked')
    risks.push(`Client verification blocked: ${completed.data.reason ?? 'no reason recorded'}.`);
  if (completed?.data.outcome === 'failed')
    risks.push(`The client flow failed: ${completed.data.reason ?? 'no reason recorded'}.`);
  if (!completed)
    risks.push('No client flow is declared for this repository: only the checks prove the change.');
  if (voided.length) {
    const reasons = [...new Set(voided.map((v) => v.data.reason.replace('_', ' ')))].join(', ');
    risks.push(`${voided.length} capture(s) void (${reasons}): not evidence.`);
  }
  const waiting = evidence.filter((e) => !e.shareable).length;
  if (waiting) risks.push(`${waiting} screenshot(s) await a reviewer's privacy approval and are not linked.`);
  if (lost.length)
    risks.push(`${lost.length} artifact(s) failed read-back verification and are not evidence.`);
  const residualRisk = (
    risks.length ? risks.join(' ') : 'None found beyond what the checks and the client flow cover.'
  ).slice(0, 2000);
  const humanAction = HUMAN_ACTION[outcome];

  const attempts = attemptsOf(events, taskId);
  const data: Omit<ReceiptData, 'rendered'> = {
    receiptId: at.receiptId,
    taskId,
    revision,
    outcome,
    checks: checks.data.results,
    client,
    evidence,
    residualRisk,
    humanAction,
    attempts,
    escalation: escalationOf(events, taskId),
    stages: stagesOf(events, taskId, checks, at.builtAt),
    builtAt: at.builtAt,
  };
  const reporters = events
    .filter(isType('AttemptFinished'))
    .filter((e) => e.data.taskId === taskId)
    .flatMap((e) => (e.data.usage ? [e.data.usage.reportedBy] : []));
  const usage = usageLine(attempts, reporters);
  const excerpts = excerptsOf(events, checks.data.results);
  const captureLines = captures.map((c) => ({
    step: c.data.step,
    captureId: c.data.captureId,
    token: c.data.leaseToken,
  }));
  const logs = checks.data.results.map((result, index): CheckLog => {
    const sha = result.outputSha256;
    if (sha === null) return { status: 'none' };
    if (result.outputBytes === 0) return { status: 'empty' };
    const id = checkLogArtifactId(index, sha);
    const log = ofRevision.find((e) => e.data.kind === 'check_log' && e.data.artifactId === id);
    if (!log) return { status: 'missing' };
    return log.data.bytes === 0 ? { status: 'empty' } : { status: 'stored', key: log.data.key };
  });
  const steps = new Map(captures.map((c) => [c.data.captureId, c.data.step]));
  const labels = new Map(
    stored.flatMap((e) => {
      const step = e.data.captureId ? steps.get(e.data.captureId) : undefined;
      return step ? [[e.data.key, step] as const] : [];
    }),
  );
  const link = (key: string): string =>
    at.linkBase ? `<${evidenceLinkUrl(at.linkBase, key)}>` : evidenceLinkPlaceholder(key);
  const facts = { captures: captureLines, logs, labels, usage, excerpts };
  // Head and tail of every log while they fit one message; otherwise only where a check did not pass.
  let rendered = render(data, facts, link, 'all');
  if (rendered.endsWith(TRUNCATED)) rendered = render(data, facts, link, 'unpassed');
  return { ...data, rendered };
}

/** What the receipt says about one check's output, on the check's own line. */
type CheckLog = { status: 'none' | 'empty' | 'missing' } | { status: 'stored'; key: string };

const HUMAN_ACTION: Record<ReceiptData['outcome'], string> = {
  pr_ready:
    'Reply in this thread: `approve`, `revise: <what to change>` or `reject: <why>`. Approval does not merge: the branch waits for a human to merge it.',
  implemented_client_blocked:
    'The checks pass but the client could not be verified. Reply `approve` if that is acceptable, `revise: <what to change>` or `reject: <why>`.',
  blocked:
    'The proof is incomplete. Reply `revise: <what to change>` to try again, or `reject: <why>`; `approve` accepts it as it is.',
};

const OUTCOME_LABEL: Record<ReceiptData['outcome'], string> = {
  pr_ready: 'PR ready',
  implemented_client_blocked: 'implemented; client verification blocked',
  blocked: 'blocked',
};

const CHECK_MARK: Record<CheckResult['outcome'], string> = {
  passed: '✅',
  failed: '❌',
  timeout: '⏱️',
  error: '⚠️',
  skipped: '➖',
};

const short = (sha: string): string => sha.slice(0, 12);
const code = (s: string): string => `\`${s.replace(/`/g, "'")}\``;

const STAGE_LABEL: Record<ReceiptStage['stage'], string> = {
  report_to_task: 'report → task',
  worktree: 'worktree',
  agent: 'agent',
  checks: 'checks',
  proof: 'proof',
  total: 'total',
};

const ATTEMPT_RESULT: Record<ReceiptAttempt['result'], string> = {
  passed: 'passed the checks',
  failed: 'failed',
  no_change: 'changed nothing',
  timeout: 'timed out',
  runtime_error: 'runtime error',
  unfinished: 'did not finish',
};

const EXCERPT_LINE = 100;
const clip = (line: string): string =>
  line.length > EXCERPT_LINE ? `${line.slice(0, EXCERPT_LINE - 1)}…` : line;

function render(
  r: Omit<ReceiptData, 'rendered'>,
  facts: {
    captures: { step: string; captureId: string; token: number }[];
    logs: CheckLog[];
    labels: Map<string, string>;
    usage: string | null;
    excerpts: (OutputExcerpt | null)[];
  },
  linkTo: (key: string) => string,
  excerptsFor: 'all' | 'unpassed',
): string {
  const { captures, logs, labels, excerpts } = facts;
  const shareable = new Map(r.evidence.map((e) => [e.key, e.shareable]));
  const logLine = (log: CheckLog | undefined): string => {
    switch (log?.status) {
      case undefined:
      case 'none':
        return '';
      case 'empty':
        return ' · no output';
      case 'missing':
        return ' · log not stored';
      case 'stored':
        return shareable.get(log.key) === false
          ? ' · log awaiting privacy approval'
          : ` · [log](${linkTo(log.key)})`;
    }
  };
  const lines: string[] = [];
  lines.push(`**caseloop receipt** ${code(r.receiptId)}`);
  lines.push(`**Outcome:** ${OUTCOME_LABEL[r.outcome]}`);
  lines.push(`**Revision:** ${code(r.revision)}`);
  const passed = r.checks.filter((c) => c.outcome === 'passed').length;
  const oneRevision = r.checks.every((c) => c.revision === r.revision);
  lines.push(
    '',
    `**Checks** — ${passed}/${r.checks.length} passed${oneRevision ? ` on ${code(short(r.revision))}` : ''}`,
  );
  for (const [i, c] of r.checks.slice(0, MAX_CHECKS).entries()) {
    const on = oneRevision ? '' : ` on ${code(short(c.revision))}`;
    lines.push(`${CHECK_MARK[c.outcome]} ${code(c.name)} (${c.kind}) ${c.outcome}${on}${logLine(logs[i])}`);
    const ex = excerpts[i];
    if (ex && ex.head.length > 0 && (excerptsFor === 'all' || c.outcome !== 'passed')) {
      // The first and the last line of the log; the whole log is the link above.
      const last = ex.tail.at(-1) ?? (ex.head.length > 1 ? ex.head.at(-1) : undefined);
      const between = ex.omittedLines + Math.max(0, ex.head.length - 1) + Math.max(0, ex.tail.length - 1);
      lines.push(
        `> ${code(clip(ex.head[0] as string))}${last !== undefined ? `${between ? ` … ${between} lines … ` : ' … '}${code(clip(last))}` : ''}`,
      );
    }
  }
  if (r.checks.length > MAX_CHECKS) lines.push(`…and ${r.checks.length - MAX_CHECKS} more`);
  const attempts = r.attempts ?? [];
  const stages = r.stages ?? [];
  if (attempts.length > 0) {
    const shown = attempts.slice(-MAX_ATTEMPTS).map((a) => {
      const failed = a.result === 'failed' && a.failedCheck ? ` ${code(a.failedCheck)}` : '';
      const esc = a.kind === 'escalation' ? ' (escalation)' : '';
      return `#${a.attempt} ${code(a.route)}${esc} ${ATTEMPT_RESULT[a.result]}${failed}`;
    });
    const more = attempts.length > MAX_ATTEMPTS ? `${attempts.length - MAX_ATTEMPTS} earlier · ` : '';
    lines.push('', `**Attempts** — ${attempts.length}: ${more}${shown.join(' · ')}`);
  }
  if (r.escalation) {
    const after = r.escalation.afterAttempts.map((n) => `#${n}`).join(' and ');
    lines.push(
      `**Escalation:** ${code(r.escalation.route)} after ${after || 'two attempts'} failed ${code(r.escalation.focusedCheck)}`,
    );
  }
  if (facts.usage) lines.push(`**Agent usage:** ${facts.usage}`);
  if (stages.length > 0) {
    const total = stages.find((s) => s.stage === 'total');
    const parts = stages
      .filter((s) => s.stage !== 'total')
      .map((s) => `${STAGE_LABEL[s.stage]} ${duration(s.ms)}`);
    lines.push(`**Time**${total ? ` — ${duration(total.ms)}` : ''}: ${parts.join(' · ')}`);
  }
  lines.push(
    '',
    `**Client flow:** ${r.client.flow ? code(r.client.flow) : 'none declared'} — ${r.client.outcome.replace('_', ' ')}`,
  );
  for (const c of captures.slice(0, MAX_CAPTURES))
    lines.push(`- ${code(c.step)} capture ${code(c.captureId)} under lease ${c.token}`);
  if (captures.length > MAX_CAPTURES) lines.push(`…and ${captures.length - MAX_CAPTURES} more captures`);
  lines.push('', '**Evidence** (private bucket, sha-256 verified on read-back)');
  // Check logs are linked from their checks above; the rest is listed here.
  const onCheckLines = new Set(
    logs.slice(0, MAX_CHECKS).flatMap((l) => (l.status === 'stored' ? [l.key] : [])),
  );
  const listed = r.evidence.filter((e) => !onCheckLines.has(e.key));
  if (r.evidence.length === 0) lines.push('none stored');
  else if (listed.length === 0) lines.push('the check logs linked above');
  for (const e of listed.slice(0, MAX_EVIDENCE)) {
    const label = labels.get(e.key);
    const what = `${e.kind.replace('_', ' ')}${label ? ` of ${code(label)}` : ''}`;
    const digest = `sha256:${short(e.sha256)}`;
    lines.push(
      `- ${what} ${e.shareable ? `[${digest}](${linkTo(e.key)})` : `${code(digest)} awaiting privacy approval`}`,
    );
  }
  if (listed.length > MAX_EVIDENCE) lines.push(`…and ${listed.length - MAX_EVIDENCE} more`);
  lines.push('', `**Residual risk:** ${r.residualRisk}`, '', `**Your decision:** ${r.humanAction}`);
  let text = lines.join('\n');
  if (text.length > MAX_RENDERED) text = `${text.slice(0, MAX_RENDERED - 40)}\n${TRUNCATED}`;
  // Every part above comes from configuration and the service's own events; the scan is the last
  // guard against a secret that slipped into a check name or a failure reason.
  return redactText(text).text;
}

function dedupeBy<T>(items: T[], key: (t: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((i) => {
    const k = key(i);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
