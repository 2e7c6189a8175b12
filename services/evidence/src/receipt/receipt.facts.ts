import type { EventData, OutputExcerpt, RecordedEvent } from '@caseloop/contracts';

type ReceiptData = EventData<'ReceiptBuilt'>;
export type ReceiptAttempt = NonNullable<ReceiptData['attempts']>[number];
export type ReceiptStage = NonNullable<ReceiptData['stages']>[number];

type Ev<T extends RecordedEvent['type']> = Extract<RecordedEvent, { type: T }>;
const isType =
  <T extends RecordedEvent['type']>(type: T) =>
  (e: RecordedEvent): e is Ev<T> =>
    e.type === type;

/** Every attempt of the task, oldest first, with the check that failed it and its reported usage. */
export function attemptsOf(events: readonly RecordedEvent[], taskId: string): ReceiptAttempt[] {
  const finished = new Map(
    events
      .filter(isType('AttemptFinished'))
      .filter((e) => e.data.taskId === taskId)
      .map((e) => [e.data.attemptId, e.data]),
  );
  return events
    .filter(isType('AttemptStarted'))
    .filter((e) => e.data.taskId === taskId)
    .map((s) => {
      const f = finished.get(s.data.attemptId);
      const failed = f?.checks.find((c) => c.outcome !== 'passed' && c.outcome !== 'skipped');
      const result: ReceiptAttempt['result'] = !f
        ? 'unfinished'
        : f.outcome === 'changed'
          ? failed
            ? 'failed'
            : f.checks.length > 0
              ? 'passed'
              : 'failed'
          : f.outcome;
      return {
        attempt: s.data.attempt,
        route: s.data.route.name,
        kind: s.data.route.kind,
        result,
        failedCheck: failed?.name ?? null,
        durationMs: f?.durationMs ?? null,
        costUsd: f?.usage?.costUsd ?? null,
        inputTokens: f?.usage?.inputTokens ?? null,
        outputTokens: f?.usage?.outputTokens ?? null,
      };
    });
}

export function escalationOf(
  events: readonly RecordedEvent[],
  taskId: string,
): NonNullable<ReceiptData['escalation']> | null {
  const used = events.filter(isType('EscalationUsed')).find((e) => e.data.taskId === taskId);
  if (!used) return null;
  const numbers = new Map(
    events.filter(isType('AttemptStarted')).map((e) => [e.data.attemptId, e.data.attempt] as const),
  );
  return {
    route: used.data.route.name,
    focusedCheck: used.data.focusedCheck,
    afterAttempts: used.data.failedAttemptIds.flatMap((id) => {
      const n = numbers.get(id);
      return n === undefined ? [] : [n];
    }),
  };
}

const at = (e: RecordedEvent | undefined): number | null => (e ? Date.parse(e.occurredAt) : null);
const span = (from: number | null, to: number | null): number | null =>
  from === null || to === null ? null : Math.max(0, to - from);

/**
 * Wall-clock time per stage, from what the ledger holds: the report until the task was assigned,
 * the worktree, the agent's and the checks' own measured durations (every attempt and run of the
 * task), the proof (client validation and storage, from the passing checks to this receipt), and
 * the whole case until now. A stage the events do not show is left out rather than guessed.
 */
export function stagesOf(
  events: readonly RecordedEvent[],
  taskId: string,
  provenAt: RecordedEvent,
  builtAt: string,
): ReceiptStage[] {
  const assigned = events.filter(isType('TaskAssigned')).find((e) => e.data.taskId === taskId);
  const prepared = events.filter(isType('WorktreePrepared')).find((e) => e.data.taskId === taskId);
  const built = Date.parse(builtAt);
  const sum = (ms: number[]): number | null => (ms.length === 0 ? null : ms.reduce((a, b) => a + b, 0));
  const stages: [ReceiptStage['stage'], number | null][] = [
    ['report_to_task', span(at(events[0]), at(assigned))],
    ['worktree', span(at(assigned), at(prepared))],
    [
      'agent',
      sum(
        events
          .filter(isType('AttemptFinished'))
          .filter((e) => e.data.taskId === taskId)
          .map((e) => e.data.durationMs),
      ),
    ],
    [
      'checks',
      sum(
        events
          .filter(isType('ChecksCompleted'))
          .filter((e) => e.data.taskId === taskId)
          .flatMap((e) => e.data.results.map((r) => r.durationMs)),
      ),
    ],
    ['proof', span(at(provenAt), built)],
    ['total', span(at(events[0]), built)],
  ];
  return stages.flatMap(([stage, ms]) => (ms === null || Number.isNaN(ms) ? [] : [{ stage, ms }]));
}

/** The output excerpt the worker recorded for a check result (matched by revision, name and digest). */
export function excerptsOf(
  events: readonly RecordedEvent[],
  results: readonly { name: string; revision: string; outputSha256: string | null }[],
): (OutputExcerpt | null)[] {
  const finished = events.filter(isType('CheckFinished'));
  return results.map(
    (r) =>
      finished.findLast(
        (f) =>
          f.data.result.name === r.name &&
          f.data.result.revision === r.revision &&
          f.data.result.outputSha256 === r.outputSha256,
      )?.data.excerpt ?? null,
  );
}

/** 850 ms, 12 s, 3 min 05 s, 1 h 04 min. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

const compact = (n: number): string =>
  n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);

/** What the runtimes reported over all attempts, said as such; attempts without a report are counted. */
export function usageLine(attempts: readonly ReceiptAttempt[], reporters: readonly string[]): string | null {
  const finished = attempts.filter((a) => a.result !== 'unfinished');
  if (finished.length === 0) return null;
  const costs = finished.flatMap((a) => (a.costUsd === null ? [] : [a.costUsd]));
  const inputs = finished.flatMap((a) => (a.inputTokens === null ? [] : [a.inputTokens]));
  const outputs = finished.flatMap((a) => (a.outputTokens === null ? [] : [a.outputTokens]));
  const reported = finished.filter(
    (a) => a.costUsd !== null || a.inputTokens !== null || a.outputTokens !== null,
  );
  if (reported.length === 0) return 'not reported by the runtime';
  const parts: string[] = [];
  if (costs.length) parts.push(`$${costs.reduce((a, b) => a + b, 0).toFixed(2)}`);
  if (inputs.length) parts.push(`${compact(inputs.reduce((a, b) => a + b, 0))} tokens in`);
  if (outputs.length) parts.push(`${compact(outputs.reduce((a, b) => a + b, 0))} out`);
  const by = reporters.length ? ` (as reported by ${[...new Set(reporters)].join(', ')})` : '';
  const missing = finished.length - reported.length;
  return `${parts.join(', ')}${by}${missing ? `; ${missing} attempt(s) reported nothing` : ''}`;
}
