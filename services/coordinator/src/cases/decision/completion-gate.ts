import { CheckResult, RecordedEvent } from '@caseloop/contracts';
import { CaseRecord } from './case-record.evolve';

export type CheckKind = CheckResult['kind'];

export interface Claim {
  ok: boolean;
  detail: string;
}

export interface GateVerdict {
  claims: { checks: Claim; revision: Claim; client: Claim; evidence: Claim };
  complete: boolean;
  outcome: 'pr_ready' | 'implemented_client_blocked' | 'blocked' | null;
  /** The proof was made on a target head that is no longer current. */
  stale: boolean;
  targetHead: string;
}

type Receipt = RecordedEvent<'ReceiptBuilt'>['data'];
const short = (rev: string): string => rev.slice(0, 12);
const clip = (s: string): string => (s.length > 500 ? `${s.slice(0, 497)}...` : s);

/**
 * The completion gate, from the case's folded facts only. Four independent claims:
 * 1. the configured checks passed on the receipt's revision;
 * 2. that revision and every result, capture and artifact belong to the current target head;
 * 3. the client was exercised on it (or the truthful "client verification blocked");
 * 4. the evidence was privacy-reviewed and is durable (stored, read back, digest verified).
 * The fourth claim's last part — the receipt confirmed in every source thread — is awaited
 * after routing (CaseAwaitingReview), because it can only hold after this verdict is delivered.
 */
export function evaluateGate(
  state: CaseRecord,
  receipt: Receipt,
  requiredKinds: readonly CheckKind[],
): GateVerdict {
  const rev = receipt.revision;
  const task = receipt.taskId;
  const head = state.targetHead ?? rev;
  const facts = state.rules;

  // 1. checks
  const runs = facts.runs.filter((r) => r.taskId === task);
  const run = [...runs].reverse().find((r) => r.revision === rev);
  const latestRun = runs.at(-1);
  let checks: Claim;
  if (!run) checks = { ok: false, detail: `no check run on ${short(rev)}` };
  else {
    const failed = run.results.filter(
      (r) => r.outcome !== 'passed' && !(r.outcome === 'skipped' && !requiredKinds.includes(r.kind)),
    );
    const missing = requiredKinds.filter(
      (k) => !run.results.some((r) => r.kind === k && r.outcome === 'passed'),
    );
    if (!run.passed || failed.length > 0 || missing.length > 0) {
      const parts = [
        ...failed.map((r) => `${r.name} ${r.outcome}`),
        ...missing.map((k) => `no passing ${k} check`),
        ...(run.passed ? [] : ['the run did not pass']),
      ];
      checks = { ok: false, detail: clip(parts.join('; ')) };
    } else {
      checks = {
        ok: true,
        detail: `${run.results.length} check(s) passed on ${short(rev)}: ${run.results.map((r) => r.name).join(', ')}`,
      };
    }
  }

  // 2. revision
  const revProblems: string[] = [];
  let stale = false;
  if (run) {
    const foreign = run.results.filter((r) => r.revision !== rev);
    if (foreign.length > 0) revProblems.push(`${foreign.length} result(s) name another revision`);
    if (run.targetHead !== head) {
      stale = true;
      revProblems.push(`target moved: proven on ${short(run.targetHead)}, target is now ${short(head)}`);
    }
  }
  if (latestRun && latestRun.revision !== rev)
    revProblems.push(`a newer check run exists on ${short(latestRun.revision)}`);
  const pushed = facts.pushed[task];
  if (pushed !== undefined && pushed !== rev)
    revProblems.push(`the branch is at ${short(pushed)}, not ${short(rev)}`);
  const clientRun = facts.clientRuns[task];
  if (clientRun && clientRun.revision !== rev)
    revProblems.push(`the client was exercised on ${short(clientRun.revision)}`);
  const stored = facts.stored;
  for (const item of receipt.evidence) {
    const a = stored.find((s) => s.sha256 === item.sha256 && s.key === item.key);
    if (a && item.kind !== 'receipt' && a.revision !== rev)
      revProblems.push(`artifact ${a.artifactId} belongs to ${short(a.revision)}`);
  }
  const revision: Claim =
    revProblems.length === 0 && run
      ? { ok: true, detail: `revision ${short(rev)} on target head ${short(head)}` }
      : { ok: false, detail: clip(revProblems.join('; ') || `no proof on ${short(rev)}`) };

  // 3. client
  let client: Claim;
  let clientBlocked = false;
  if (!clientRun || clientRun.revision !== rev) {
    client =
      receipt.client.outcome === 'not_declared'
        ? { ok: true, detail: 'the repository declares no client to exercise' }
        : { ok: false, detail: `no client validation on ${short(rev)}` };
  } else if (clientRun.outcome === 'passed') {
    client = { ok: true, detail: `client flow passed with ${clientRun.captures} capture(s)` };
  } else if (clientRun.outcome === 'blocked') {
    clientBlocked = true;
    client = {
      ok: true,
      detail: clip(`implemented; client verification blocked: ${clientRun.reason ?? 'no reason given'}`),
    };
  } else {
    client = { ok: false, detail: clip(`client flow failed: ${clientRun.reason ?? 'no reason given'}`) };
  }

  // 4. evidence
  const evProblems: string[] = [];
  const approved = new Set(facts.privacyApproved);
  const items = receipt.evidence.filter((i) => i.kind !== 'receipt');
  if (items.length === 0) evProblems.push('the receipt names no evidence');
  for (const item of items) {
    const a = stored.find((s) => s.sha256 === item.sha256 && s.key === item.key);
    if (!a) {
      evProblems.push(`${item.kind} ${item.sha256.slice(0, 12)} was never stored and read back`);
      continue;
    }
    const lost = facts.lostArtifacts.find((f) => f.artifactId === a.artifactId && f.seq > a.seq);
    if (lost) evProblems.push(`${a.artifactId} failed its read-back`);
    const review = [...facts.reviews]
      .reverse()
      .find((r) => r.artifactId === a.artifactId || r.sha256 === item.sha256);
    const cleared =
      review &&
      (review.decision === 'cleared' ||
        review.decision === 'redacted' ||
        (review.decision === 'needs_human' && approved.has(item.sha256)));
    if (!cleared && item.shareable !== false) evProblems.push(`${a.artifactId} is not privacy-cleared`);
  }
  const evidence: Claim =
    evProblems.length === 0
      ? { ok: true, detail: `${items.length} artifact(s) privacy-reviewed, stored and read back` }
      : { ok: false, detail: clip(evProblems.join('; ')) };

  const blocker = facts.blockers[task];
  const blockedNow = blocker !== undefined && facts.resumedAt < blocker;
  // Blocked, as the evidence service also judges it: a blocker, a failed client flow, or lost evidence.
  const clientFailed = clientRun?.revision === rev && clientRun.outcome === 'failed';
  const lostEvidence = evProblems.some((p) => p.includes('failed its read-back'));
  const truthful: GateVerdict['outcome'] =
    blockedNow || clientFailed || lostEvidence
      ? 'blocked'
      : clientBlocked
        ? 'implemented_client_blocked'
        : 'pr_ready';
  if (receipt.outcome !== truthful) {
    client = {
      ok: false,
      detail: clip(`the receipt says ${receipt.outcome} but the ledger says ${truthful}`),
    };
  }
  const complete = checks.ok && revision.ok && client.ok && evidence.ok && truthful !== 'blocked';
  return {
    claims: { checks, revision, client, evidence },
    complete,
    outcome: complete ? truthful : truthful === 'blocked' && receipt.outcome === 'blocked' ? 'blocked' : null,
    stale,
    targetHead: head,
  };
}
