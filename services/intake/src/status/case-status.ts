import type { DiscordPlace, RecordedEvent } from '@caseloop/contracts';

/**
 * The one live status message of a case: where its task is (assigned, attempt, checks n of m,
 * browser, evidence, receipt, decision), folded from the case's events. It names counts, check
 * names, outcomes and ids only — never report text, a title or a brief — so it is as safe to post
 * as a receipt. Pure.
 */
export interface CaseStatus {
  caseId: string;
  /** Where the status lives: the thread of the case's first source. */
  place: DiscordPlace | null;
  task: { taskId: string; state: 'assigned' | 'resumed' | 'cancelled' } | null;
  attempt: { n: number; running: boolean } | null;
  checks: {
    passed: number;
    failed: number;
    total: number;
    revision: string;
    running: boolean;
    /** While a run reports check by check (CheckStarted/CheckFinished): how many ended, which one runs. */
    progress: { done: number; current: string | null } | null;
  } | null;
  browser: { flow: string; outcome: string | null } | null;
  evidence: { stored: number } | null;
  receipt: { receiptId: string; posted: boolean } | null;
  decision: 'awaiting_review' | 'approved' | 'rejected' | 'revision_requested' | null;
}

export function foldCaseStatus(caseId: string, events: readonly RecordedEvent[]): CaseStatus {
  const s: CaseStatus = {
    caseId,
    place: null,
    task: null,
    attempt: null,
    checks: null,
    browser: null,
    evidence: null,
    receipt: null,
    decision: null,
  };
  const receiptDeliveries = new Set<string>();
  for (const e of events) {
    switch (e.type) {
      case 'DeliveryRequested':
        if (e.data.kind === 'receipt' && e.data.receiptId === s.receipt?.receiptId)
          receiptDeliveries.add(e.data.deliveryId);
        break;
      case 'CaseOpened':
        s.place = e.data.place;
        break;
      case 'TaskAssigned':
        s.task = { taskId: e.data.taskId, state: 'assigned' };
        break;
      case 'TaskResumed':
        s.task = { taskId: e.data.taskId, state: 'resumed' };
        // A new round: what the last one proved is no longer the state of the case.
        s.checks = s.checks ? { ...s.checks, running: true } : null;
        s.browser = null;
        s.receipt = null;
        s.decision = e.data.reason === 'revision_requested' ? 'revision_requested' : s.decision;
        break;
      case 'TaskCancelled':
        if (s.task) s.task = { ...s.task, state: 'cancelled' };
        break;
      case 'AttemptStarted':
        s.attempt = { n: e.data.attempt, running: true };
        break;
      case 'CheckStarted': {
        const c = s.checks;
        // The first check of a run, or a run on another revision, starts the count again.
        const fresh = e.data.index === 0 || !c?.progress || c.revision !== e.data.revision;
        s.checks = fresh
          ? {
              passed: 0,
              failed: 0,
              total: e.data.total,
              revision: e.data.revision,
              running: true,
              progress: { done: 0, current: e.data.name },
            }
          : { ...c, total: e.data.total, progress: { done: c.progress?.done ?? 0, current: e.data.name } };
        break;
      }
      case 'CheckFinished': {
        const c = s.checks?.progress ? s.checks : null;
        const r = e.data.result;
        const base = c ?? {
          passed: 0,
          failed: 0,
          total: e.data.total,
          revision: r.revision,
          running: true,
          progress: { done: 0, current: null },
        };
        s.checks = {
          ...base,
          total: e.data.total,
          passed: base.passed + (r.outcome === 'passed' ? 1 : 0),
          failed: base.failed + (FAILED.has(r.outcome) ? 1 : 0),
          progress: { done: Math.max(base.progress?.done ?? 0, e.data.index) + 1, current: null },
        };
        break;
      }
      case 'AttemptFinished': {
        s.attempt = { n: s.attempt?.n ?? 1, running: false };
        const results = e.data.checks;
        if (results.length > 0) s.checks = tally(results, true);
        break;
      }
      case 'ChecksCompleted':
        s.checks = tally(e.data.results, false);
        break;
      case 'ClientValidationStarted':
        s.browser = { flow: e.data.flow, outcome: null };
        break;
      case 'ClientValidationCompleted':
        s.browser = { flow: s.browser?.flow ?? 'client', outcome: e.data.outcome };
        break;
      case 'ArtifactStored':
        if (e.data.kind !== 'receipt') s.evidence = { stored: (s.evidence?.stored ?? 0) + 1 };
        break;
      case 'ReceiptBuilt':
        s.receipt = { receiptId: e.data.receiptId, posted: false };
        break;
      case 'DeliveryConfirmed':
        if (s.receipt && receiptDeliveries.has(e.data.deliveryId)) s.receipt = { ...s.receipt, posted: true };
        break;
      case 'CaseAwaitingReview':
        s.decision = 'awaiting_review';
        break;
      case 'CaseApproved':
        s.decision = 'approved';
        break;
      case 'CaseRejected':
        s.decision = 'rejected';
        break;
      default:
        break;
    }
  }
  return s;
}

function tally(
  results: readonly { outcome: string; revision: string }[],
  running: boolean,
): NonNullable<CaseStatus['checks']> {
  const passed = results.filter((r) => r.outcome === 'passed').length;
  return {
    passed,
    failed: results.filter((r) => FAILED.has(r.outcome)).length,
    total: results.length,
    revision: results[0]?.revision ?? '',
    running,
    progress: null,
  };
}

const FAILED: ReadonlySet<string> = new Set(['failed', 'error', 'timeout']);

function checksLine(c: NonNullable<CaseStatus['checks']>): string {
  const on = c.revision ? ` on \`${c.revision.slice(0, 12)}\`` : '';
  if (c.progress) {
    const ran = `⏳ Checks ${c.progress.done} of ${c.total} run (${c.passed} passed${c.failed > 0 ? `, ${c.failed} failed` : ''})`;
    return ran + on + (c.progress.current ? ` · running \`${c.progress.current}\`` : '');
  }
  return (
    `${mark(c.running ? null : c.failed === 0)} Checks ${c.passed} of ${c.total} passed` +
    on +
    (c.running ? ' (attempt)' : '')
  );
}

const mark = (done: boolean | null): string => (done === null ? '⏳' : done ? '✅' : '❌');

/** The status as Discord shows it (≤ 2000 characters, no mentions). */
export function renderCaseStatus(s: CaseStatus): string {
  const lines = [`**Case ${s.caseId} — live status**`];
  lines.push(
    s.task
      ? `${s.task.state === 'cancelled' ? '⛔' : '✅'} Task \`${s.task.taskId}\` ${s.task.state}` +
          (s.attempt ? ` · attempt ${s.attempt.n}${s.attempt.running ? ' running' : ''}` : '')
      : '⏳ Task not assigned yet',
  );
  lines.push(s.checks ? checksLine(s.checks) : '⏳ Checks not run yet');
  lines.push(
    s.browser
      ? `${mark(s.browser.outcome === null ? null : s.browser.outcome === 'passed')} Browser: ${s.browser.flow} ${s.browser.outcome ?? 'running'}`
      : '⏳ Browser not started',
  );
  lines.push(s.evidence ? `✅ Evidence: ${s.evidence.stored} stored` : '⏳ Evidence: none yet');
  lines.push(
    s.receipt
      ? `${s.receipt.posted ? '✅' : '⏳'} Receipt ${s.receipt.receiptId} ${s.receipt.posted ? 'posted below' : 'built'}`
      : '⏳ Receipt not built yet',
  );
  if (s.decision) lines.push(`➡️ ${s.decision.replace(/_/g, ' ')}`);
  return lines.join('\n');
}

/** The first post of the status: fixed per case, so an interrupted post reconciles like any chunk. */
export const statusPlaceholder = (caseId: string): string => `**Case ${caseId} — live status**\n⏳ starting`;

/** The delivery id of a case's status message. */
export const statusDeliveryId = (caseId: string): string => `status-${caseId}`;
