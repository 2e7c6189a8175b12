import { Aggregate, draft, EventDraft, eventDefinition, LedgerEvent, Producer } from '@caseloop/contracts';

/**
 * Realistic case lifecycles through the contracts' event types, for tests and benchmarks:
 * a report arrives, a case opens, more reports link, triage, clarification, a task, checks,
 * a PR-ready branch, the gate, the receipt and its delivery, then a human decision — sometimes
 * a revision loop first. Cases are interleaved so each case's subjects spread over the stream.
 * Deterministic for a seed.
 */
export interface GenerateOptions {
  cases: number;
  seed?: number;
  /** Extra revision loops for every case (each adds about six events). */
  revisionLoops?: number;
  startTimeMs?: number;
  /**
   * Cases open at the same time: a case's events interleave with those of the others open with it,
   * as in a real ledger where cases open and close over time (default 250).
   */
  concurrency?: number;
}

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = (r: () => number, n: number): string => {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(r() * 16).toString(16);
  return s;
};
const digits = (r: () => number, n: number): string => {
  let s = String(1 + Math.floor(r() * 9));
  for (let i = 1; i < n; i++) s += Math.floor(r() * 10);
  return s;
};

interface Step {
  aggregate: Aggregate;
  aggregateId: string;
  producer: Producer;
  draft: EventDraft;
}

function lifecycle(r: () => number, index: number, loops: number, tag: string): Step[] {
  const caseId = `C${tag}${String(index).padStart(7, '0')}`;
  const taskId = `T${tag}${String(index).padStart(7, '0')}`;
  const guildId = '100000000000000001';
  const channelId = `2000000000000000${index % 7}`;
  const reporterId = digits(r, 18);
  const steps: Step[] = [];
  const c = (producer: Producer, d: EventDraft) => steps.push({ aggregate: 'case', aggregateId: caseId, producer, draft: d });
  const sourceIds: string[] = [];
  const newSource = (threadId: string | null) => {
    const messageId = digits(r, 19);
    const sourceId = `discord-${messageId}`;
    const place = { guildId, channelId, threadId, messageId };
    steps.push({
      aggregate: 'source',
      aggregateId: sourceId,
      producer: 'intake',
      draft: draft('SourceReceived', {
        sourceId,
        place,
        authorId: reporterId,
        authorIsReviewer: false,
        content: `The export button does nothing on the settings page (report ${index}); steps: open settings, click export.`,
        attachments: [],
        mentionedBot: true,
        createdAt: new Date(Date.UTC(2026, 10, 1) + index * 1000).toISOString(),
        via: r() < 0.9 ? 'gateway' : 'delta',
      }),
    });
    sourceIds.push(sourceId);
    return { sourceId, place };
  };

  const first = newSource(null);
  c('coordinator', draft('CaseOpened', { ...first, reporterId, title: `Export does nothing (${index})`, confidence: 0.9, reasons: ['new report'] }));
  if (r() < 0.05) {
    const dropped = digits(r, 19);
    steps.push({
      aggregate: 'source',
      aggregateId: `discord-${dropped}`,
      producer: 'intake',
      draft: draft('SourceDropped', {
        sourceId: `discord-${dropped}`,
        place: { guildId, channelId, threadId: null, messageId: dropped },
        authorId: digits(r, 18),
        reason: 'author_not_listed',
        via: 'gateway',
      }),
    });
  }
  const linked = r() < 0.3 ? 1 + Math.floor(r() * 2) : 0;
  for (let i = 0; i < linked; i++) {
    const s = newSource(r() < 0.5 ? digits(r, 19) : null);
    c('coordinator', draft('SourceLinked', { ...s, reporterId: digits(r, 18), via: r() < 0.5 ? 'semantic_match' : 'thread', confidence: 0.95, reasons: ['same steps'] }));
  }
  const kind = r();
  if (kind < 0.1) {
    c('coordinator', draft('CaseClassified', { classification: 'feedback', confidence: 0.8, reasons: ['a wish, not a defect'], by: 'rules' }));
    return steps;
  }
  c('coordinator', draft('CaseClassified', { classification: kind < 0.7 ? 'bug' : 'regression', confidence: 0.85, reasons: ['broken behaviour'], by: 'rules' }));
  if (r() < 0.3) {
    c('coordinator', draft('ClarificationRequested', { missing: ['environment'], question: 'Which browser and version?' }));
    if (r() < 0.2) return steps;
  }
  c('coordinator', draft('ReadinessConfirmed', { owner: 'web-team', repository: 'webapp' }));
  const baseRevision = hex(r, 40);
  c('coordinator', draft('TaskAssigned', { taskId, repository: 'webapp', targetBranch: 'main', targetRevision: baseRevision, brief: 'Make export work again.' }));
  const branch = `caseloop/${caseId}`;
  const attempt = (n: number) => {
    const revision = hex(r, 40);
    const passed = r() < 0.85;
    c('worker', draft('ChecksCompleted', {
      taskId,
      revision,
      targetHead: baseRevision,
      passed,
      results: [
        { name: 'lint', kind: 'lint', outcome: 'passed', revision, durationMs: 900 + n, exitCode: 0, outputSha256: hex(r, 64), outputBytes: 120 },
        { name: 'unit', kind: 'focused_test', outcome: passed ? 'passed' : 'failed', revision, durationMs: 4100, exitCode: passed ? 0 : 1, outputSha256: hex(r, 64), outputBytes: 2048 },
      ],
    }));
    if (!passed) {
      c('worker', draft('BlockerRaised', { taskId, kind: 'checks_failing', detail: 'The focused test still fails.' }));
      return null;
    }
    c('worker', draft('BranchPushed', { taskId, branch, revision, baseRevision, created: n === 0, draftPullRequestUrl: null }));
    const ok = { ok: true, detail: 'ok' };
    c('coordinator', draft('GateEvaluated', { taskId, revision, targetHead: baseRevision, claims: { checks: ok, revision: ok, client: ok, evidence: ok }, complete: true, outcome: 'pr_ready' }));
    const receiptId = `R${tag}${index}x${n}`;
    c('coordinator', draft('DeliveryRequested', { deliveryId: `D${tag}${index}x${n}`, sourceId: first.sourceId, kind: 'receipt', place: first.place, content: `Receipt for ${caseId}: checks passed on ${revision}.`, receiptId }));
    c('coordinator', draft('CaseAwaitingReview', { receiptId, confirmedSources: sourceIds.slice(0, 1 + linked) }));
    return revision;
  };
  let revision = attempt(0);
  for (let n = 1; n <= loops && revision; n++) {
    c('coordinator', draft('RevisionRequested', { reviewerId: digits(r, 18), text: 'Please also cover the empty list.' }));
    c('coordinator', draft('TaskResumed', { taskId, reason: 'revision_requested', note: null }));
    revision = attempt(n);
  }
  if (!revision) return steps;
  const decision = r();
  if (decision < 0.7) c('coordinator', draft('CaseApproved', { reviewerId: digits(r, 18), branch, revision }));
  else if (decision < 0.85) c('coordinator', draft('CaseRejected', { reviewerId: digits(r, 18), reason: 'Not the fix we want.' }));
  else {
    c('coordinator', draft('RevisionRequested', { reviewerId: digits(r, 18), text: 'Please add a regression test.' }));
    c('coordinator', draft('TaskResumed', { taskId, reason: 'revision_requested', note: null }));
  }
  return steps;
}

/** Each case's steps, interleaved at random with the other open cases (each case keeps its own order). */
export function generateHistory(opts: GenerateOptions): { events: LedgerEvent[]; caseIds: string[] } {
  const r = rng(opts.seed ?? 1);
  const tag = (opts.seed ?? 1).toString(36).toUpperCase();
  const queues = Array.from({ length: opts.cases }, (_, i) => lifecycle(r, i, opts.revisionLoops ?? 0, tag));
  const caseIds = queues.map((q) => q.find((s) => s.aggregate === 'case')?.aggregateId as string);
  const cursors = queues.map(() => 0);
  const window = Math.max(1, opts.concurrency ?? 250);
  const live = queues.slice(0, window).map((_, i) => i);
  let nextCase = live.length;
  const events: LedgerEvent[] = [];
  let t = opts.startTimeMs ?? Date.UTC(2026, 10, 1);
  while (live.length > 0) {
    const k = Math.floor(r() * live.length);
    const qi = live[k] as number;
    const q = queues[qi] as Step[];
    const step = q[cursors[qi] as number] as Step;
    cursors[qi] = (cursors[qi] as number) + 1;
    if ((cursors[qi] as number) >= q.length) {
      if (nextCase < queues.length) {
        live[k] = nextCase++;
      } else {
        live[k] = live[live.length - 1] as number;
        live.pop();
      }
    }
    t += 1 + Math.floor(r() * 50);
    events.push(toLedgerEvent(step, events.length, t));
  }
  return { events, caseIds };
}

export function toLedgerEvent(step: Step, n: number, timeMs: number): LedgerEvent {
  const def = eventDefinition(step.draft.type);
  const commandId = `cmd-${step.aggregateId}-${n}`;
  return {
    eventId: `${commandId}:0`,
    version: def?.version ?? 1,
    aggregate: step.aggregate,
    aggregateId: step.aggregateId,
    producer: step.producer,
    commandId,
    causationId: null,
    correlationId: `corr-${step.aggregateId}`,
    occurredAt: new Date(timeMs).toISOString(),
    type: step.draft.type,
    data: step.draft.data,
  } as LedgerEvent;
}
