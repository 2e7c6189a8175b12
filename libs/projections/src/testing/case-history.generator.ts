import {
  Aggregate,
  DiscordPlace,
  draft,
  EventData,
  EventDraft,
  eventDefinition,
  LedgerEvent,
  Producer,
  visibleChars,
} from '@caseloop/contracts';

/**
 * Realistic case lifecycles through the contracts' event types, for tests and benchmarks:
 * a report arrives, a case opens, more reports link, triage, clarification, a task, checks,
 * a PR-ready branch, the gate, the receipt and its delivery, then a human decision — sometimes
 * a revision loop first. Cases are interleaved so each case's subjects spread over the stream.
 * Deterministic for a seed. With `variety`, lifecycles also take the rarer paths, so every event
 * type the case fold handles occurs.
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
  /**
   * Also take the rarer paths, so that every event type the case fold handles occurs: feedback a
   * reviewer makes actionable, a clarification answered in the thread, link reviews settled both
   * ways, a case marked duplicate, privacy scopes, posts journaled, confirmed and refused, receipts
   * built and judged, reviewers deciding, proofs gone stale when the target moves, tasks cancelled.
   * Off by default: without it the history for a seed stays what benchmarks and tests were built on.
   */
  variety?: boolean;
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

type Source = { sourceId: string; place: DiscordPlace };

/** One case's ids, its step list and the reports arriving for it. */
function caseScope(r: () => number, index: number, tag: string) {
  const caseId = `C${tag}${String(index).padStart(7, '0')}`;
  const taskId = `T${tag}${String(index).padStart(7, '0')}`;
  const guildId = '100000000000000001';
  const channelId = `2000000000000000${index % 7}`;
  const reporterId = digits(r, 18);
  const steps: Step[] = [];
  const c = (producer: Producer, d: EventDraft) =>
    steps.push({ aggregate: 'case', aggregateId: caseId, producer, draft: d });
  const sourceIds: string[] = [];
  const newSource = (threadId: string | null, authorId = reporterId): Source => {
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
        authorId,
        authorIsReviewer: false,
        content: `The export button does nothing on the settings page (report ${index}); steps: open settings, click export.`,
        rawChars: visibleChars(
          `The export button does nothing on the settings page (report ${index}); steps: open settings, click export.`,
        ),
        // Every other case's reports come with sealed raw text (stand-in bytes: nothing here decrypts it).
        sealed:
          index % 2 === 1
            ? {
                keyId: `src.${sourceId}`,
                iv: 'AAAAAAAAAAAAAAAA',
                tag: 'AAAAAAAAAAAAAAAAAAAAAA==',
                ciphertext: 'c2VhbGVk',
              }
            : null,
        attachments: [],
        mentionedBot: true,
        createdAt: new Date(Date.UTC(2026, 10, 1) + index * 1000).toISOString(),
        via: r() < 0.9 ? 'gateway' : 'delta',
      }),
    });
    sourceIds.push(sourceId);
    return { sourceId, place };
  };
  return { caseId, taskId, guildId, channelId, reporterId, steps, c, sourceIds, newSource };
}

function lifecycle(r: () => number, index: number, loops: number, tag: string): Step[] {
  const { caseId, taskId, guildId, channelId, reporterId, steps, c, sourceIds, newSource } = caseScope(
    r,
    index,
    tag,
  );
  const first = newSource(null);
  c(
    'coordinator',
    draft('CaseOpened', {
      ...first,
      reporterId,
      title: `Export does nothing (${index})`,
      confidence: 0.9,
      reasons: ['new report'],
    }),
  );
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
    c(
      'coordinator',
      draft('SourceLinked', {
        ...s,
        reporterId: digits(r, 18),
        via: r() < 0.5 ? 'semantic_match' : 'thread',
        confidence: 0.95,
        reasons: ['same steps'],
      }),
    );
  }
  const kind = r();
  if (kind < 0.1) {
    c(
      'coordinator',
      draft('CaseClassified', {
        classification: 'feedback',
        confidence: 0.8,
        reasons: ['a wish, not a defect'],
        by: 'rules',
      }),
    );
    return steps;
  }
  c(
    'coordinator',
    draft('CaseClassified', {
      classification: kind < 0.7 ? 'bug' : 'regression',
      confidence: 0.85,
      reasons: ['broken behaviour'],
      by: 'rules',
    }),
  );
  if (r() < 0.3) {
    c(
      'coordinator',
      draft('ClarificationRequested', { missing: ['environment'], question: 'Which browser and version?' }),
    );
    if (r() < 0.2) return steps;
  }
  c('coordinator', draft('ReadinessConfirmed', { owner: 'web-team', repository: 'webapp' }));
  const baseRevision = hex(r, 40);
  c(
    'coordinator',
    draft('TaskAssigned', {
      taskId,
      repository: 'webapp',
      targetBranch: 'main',
      targetRevision: baseRevision,
      brief: 'Make export work again.',
    }),
  );
  const branch = `caseloop/${caseId}`;
  const attempt = (n: number) => {
    const revision = hex(r, 40);
    const passed = r() < 0.85;
    c(
      'worker',
      draft('ChecksCompleted', {
        taskId,
        revision,
        targetHead: baseRevision,
        passed,
        results: [
          {
            name: 'lint',
            kind: 'lint',
            outcome: 'passed',
            revision,
            durationMs: 900 + n,
            exitCode: 0,
            outputSha256: hex(r, 64),
            outputBytes: 120,
          },
          {
            name: 'unit',
            kind: 'focused_test',
            outcome: passed ? 'passed' : 'failed',
            revision,
            durationMs: 4100,
            exitCode: passed ? 0 : 1,
            outputSha256: hex(r, 64),
            outputBytes: 2048,
          },
        ],
      }),
    );
    if (!passed) {
      c(
        'worker',
        draft('BlockerRaised', { taskId, kind: 'checks_failing', detail: 'The focused test still fails.' }),
      );
      return null;
    }
    c(
      'worker',
      draft('BranchPushed', {
        taskId,
        branch,
        revision,
        baseRevision,
        created: n === 0,
        draftPullRequestUrl: null,
      }),
    );
    const ok = { ok: true, detail: 'ok' };
    c(
      'coordinator',
      draft('GateEvaluated', {
        taskId,
        revision,
        targetHead: baseRevision,
        claims: { checks: ok, revision: ok, client: ok, evidence: ok },
        complete: true,
        outcome: 'pr_ready',
      }),
    );
    const receiptId = `R${tag}${index}x${n}`;
    c(
      'coordinator',
      draft('DeliveryRequested', {
        deliveryId: `D${tag}${index}x${n}`,
        sourceId: first.sourceId,
        kind: 'receipt',
        place: first.place,
        content: `Receipt for ${caseId}: checks passed on ${revision}.`,
        receiptId,
      }),
    );
    c(
      'coordinator',
      draft('CaseAwaitingReview', { receiptId, confirmedSources: sourceIds.slice(0, 1 + linked) }),
    );
    return revision;
  };
  let revision = attempt(0);
  for (let n = 1; n <= loops && revision; n++) {
    c(
      'coordinator',
      draft('RevisionRequested', { reviewerId: digits(r, 18), text: 'Please also cover the empty list.' }),
    );
    c('coordinator', draft('TaskResumed', { taskId, reason: 'revision_requested', note: null }));
    revision = attempt(n);
  }
  if (!revision) return steps;
  const decision = r();
  if (decision < 0.7)
    c('coordinator', draft('CaseApproved', { reviewerId: digits(r, 18), branch, revision }));
  else if (decision < 0.85)
    c('coordinator', draft('CaseRejected', { reviewerId: digits(r, 18), reason: 'Not the fix we want.' }));
  else {
    c(
      'coordinator',
      draft('RevisionRequested', { reviewerId: digits(r, 18), text: 'Please add a regression test.' }),
    );
    c('coordinator', draft('TaskResumed', { taskId, reason: 'revision_requested', note: null }));
  }
  return steps;
}

const PLAIN = 'The export button does nothing on the settings page; steps: open settings, click export.';

/**
 * A lifecycle with the rarer paths, each step in the order the services write it: the coordinator's
 * decisions as one batch (triage, privacy scope, readiness, the task, the posts it asks for), the
 * outbox journaling and confirming (or refusing) each post after it, the worker preparing the
 * worktree and checking the target head, the evidence service building the receipt, the gate
 * routing it to every thread, and reviewers deciding, settling link reviews and making feedback
 * actionable through intake.
 */
function variedLifecycle(r: () => number, index: number, loops: number, tag: string): Step[] {
  const { caseId, taskId, reporterId, steps, newSource } = caseScope(r, index, tag);
  const e = (d: EventDraft) => {
    const owner = eventDefinition(d.type)?.producer as Producer;
    steps.push({ aggregate: 'case', aggregateId: caseId, producer: owner, draft: d });
  };
  const at = () => new Date(Date.UTC(2026, 10, 1) + index * 1000 + steps.length * 37).toISOString();
  let posts = 0;

  /** The coordinator asks for a post; the outbox makes it later, with `post`. */
  const ask = (
    kind: EventData<'DeliveryRequested'>['kind'],
    to: Source,
    deliveryId: string,
    content: string,
    receiptId: string | null = null,
  ): EventData<'DeliveryRequested'> => {
    const d = { deliveryId, sourceId: to.sourceId, kind, place: to.place, content, receiptId };
    e(draft('DeliveryRequested', d));
    return d;
  };
  /** The outbox: each chunk journaled, then confirmed by Discord, or refused (and the rest not tried). */
  const post = (d: EventData<'DeliveryRequested'>, refusedChance: number): boolean => {
    const chunkCount = d.kind === 'receipt' && r() < 0.25 ? 2 : 1;
    const threadId = d.place.threadId ?? d.place.messageId;
    const key = { deliveryId: d.deliveryId, sourceId: d.sourceId };
    for (let chunkIndex = 0; chunkIndex < chunkCount; chunkIndex++) {
      e(
        draft('DeliveryIntended', {
          ...key,
          chunkIndex,
          chunkCount,
          nonce: `n${tag}${index}x${posts++}`,
          channelId: d.place.channelId,
          threadId,
          contentSha256: hex(r, 64),
          length: Math.max(1, Math.min(2000, Math.ceil(d.content.length / chunkCount))),
          intendedAt: at(),
        }),
      );
      if (r() < refusedChance) {
        const gone = r() < 0.5;
        e(
          draft('DeliveryRefused', {
            ...key,
            chunkIndex,
            reason: gone ? 'channel_gone' : 'discord_error',
            detail: gone ? 'The thread was deleted.' : 'Discord answered 500 three times.',
          }),
        );
        return false;
      }
      e(
        draft('DeliveryConfirmed', {
          ...key,
          chunkIndex,
          discordMessageId: digits(r, 19),
          channelId: d.place.channelId,
          threadId,
          reconciled: r() < 0.05,
        }),
      );
    }
    return true;
  };

  const first = newSource(null);
  /** The sources on the case, in the order they joined. */
  const sources: Source[] = [first];
  e(
    draft('CaseOpened', {
      ...first,
      reporterId,
      title: `Export does nothing (${index})`,
      confidence: 0.9,
      reasons: ['new report'],
    }),
  );
  const kind = r();
  const classification = kind < 0.2 ? 'feedback' : kind < 0.7 ? 'bug' : 'regression';
  e(
    draft('CaseClassified', {
      classification,
      confidence: 0.85,
      reasons: [classification === 'feedback' ? 'a wish, not a defect' : 'broken behaviour'],
      by: r() < 0.8 ? 'rules' : 'classifier',
    }),
  );
  const scope = (n: number) => {
    const email = r() < 0.3;
    e(
      draft('PrivacyScopeSet', {
        categories: email ? ['email'] : [],
        redactions: email ? 1 : 0,
        sanitizedBrief: `${PLAIN} (${n} report${n > 1 ? 's' : ''})`,
      }),
    );
  };
  scope(1);

  let head = hex(r, 40);
  let task = false;
  const branch = `caseloop/${caseId}`;
  /** The worker's worktree for the task, from the head it started on. */
  const prepare = () =>
    e(draft('WorktreePrepared', { taskId, worktree: caseId, branch, baseRevision: head, reused: false }));
  /** Readiness and the one task, in the batch that decided them (its post follows the batch). */
  const assign = () => {
    task = true;
    e(draft('ReadinessConfirmed', { owner: 'web-team', repository: 'webapp' }));
    // The coordinator leaves the revision to the worker, which records the head it started from.
    const pinned = r() < 0.3;
    e(
      draft('TaskAssigned', {
        taskId,
        repository: 'webapp',
        targetBranch: 'main',
        targetRevision: pinned ? head : null,
        brief: PLAIN,
      }),
    );
  };
  const pending: EventData<'DeliveryRequested'>[] = [];
  if (classification === 'feedback') {
    pending.push(
      ask(
        'ack',
        first,
        `ack-${first.sourceId}`,
        `Thanks — this is now case ${caseId}. It is recorded as product feedback.`,
      ),
    );
  } else if (r() < 0.3) {
    const question = 'Which browser and version?';
    e(draft('ClarificationRequested', { missing: ['environment'], question }));
    pending.push(ask('question', first, `question-${caseId}-1`, question));
  } else {
    assign();
    pending.push(
      ask(
        'ack',
        first,
        `ack-${first.sourceId}`,
        `Thanks — this is now case ${caseId}. Task ${taskId} is working on it.`,
      ),
    );
  }
  for (const d of pending.splice(0)) post(d, 0.08);
  const notice = (text: string) =>
    pending.push(ask('notice', first, `task-${taskId}`, `Case ${caseId} is actionable. ${text}`));
  if (!task && classification !== 'feedback' && r() < 0.8) {
    // The reporter answers in the thread of the question: a thread reply joins without an announcement.
    const reply = newSource(first.place.messageId);
    sources.push(reply);
    e(
      draft('SourceLinked', {
        ...reply,
        reporterId,
        via: 'thread',
        confidence: 1,
        reasons: ['a reply in the case thread'],
      }),
    );
    scope(sources.length);
    assign();
    notice(`Task ${taskId} is working on it.`);
  }
  if (task) prepare();
  for (const d of pending.splice(0)) post(d, 0.08);

  const linked = r() < 0.3 ? 1 + Math.floor(r() * 2) : 0;
  for (let i = 0; i < linked; i++) {
    const by = digits(r, 18);
    const s = newSource(r() < 0.5 ? digits(r, 19) : null, by);
    sources.push(s);
    e(
      draft('SourceLinked', {
        ...s,
        reporterId: by,
        via: 'semantic_match',
        confidence: 0.95,
        reasons: ['same steps'],
      }),
    );
    const d = ask(
      'linked',
      s,
      `linked-${s.sourceId}`,
      `Thanks — this is the same problem as case ${caseId}.`,
    );
    if (!task) scope(sources.length);
    post(d, 0.08);
  }
  if (r() < 0.3) {
    // A medium-confidence match is held on the case until a reviewer says whether it is the same.
    const heldBy = digits(r, 18);
    const held = newSource(r() < 0.5 ? digits(r, 19) : null, heldBy);
    const reviewId = `V${tag}${index}`;
    const confidence = 0.7 + Math.floor(r() * 15) / 100;
    e(
      draft('LinkReviewRequested', {
        ...held,
        reporterId: heldBy,
        reviewId,
        confidence,
        reasons: ['similar steps, another page'],
      }),
    );
    post(
      ask(
        'link_review',
        held,
        `review-${reviewId}`,
        `This might be the same problem as case ${caseId}; a human will check.`,
      ),
      0.08,
    );
    const same = r() < 0.6;
    e(
      draft('LinkReviewSettled', {
        reviewerId: digits(r, 18),
        messageId: digits(r, 19),
        reviewId,
        verdict: same ? 'same' : 'different',
      }),
    );
    if (same) {
      sources.push(held);
      e(
        draft('SourceLinked', {
          ...held,
          reporterId: heldBy,
          via: 'link_review',
          confidence,
          reasons: [`a reviewer settled link review ${reviewId}: same case`],
        }),
      );
      const d = ask(
        'linked',
        held,
        `linked-${held.sourceId}`,
        `Thanks — this is the same problem as case ${caseId}.`,
      );
      if (!task) scope(sources.length);
      post(d, 0.08);
    }
  }
  if (index > 0 && r() < 0.08) {
    // A reviewer folded this case into an earlier one: the case ends, and its task with it.
    e(
      draft('CaseMarkedDuplicate', {
        intoCaseId: `C${tag}${String(index - 1).padStart(7, '0')}`,
        reviewerId: digits(r, 18),
      }),
    );
    if (task) {
      e(draft('TaskCancelled', { taskId, reason: 'duplicate of an earlier case' }));
      e(draft('WorktreeRemoved', { taskId, worktree: caseId, reason: 'duplicate' }));
    }
    return steps;
  }
  if (!task) {
    if (r() < 0.5) return steps;
    // A reviewer turns the waiting case into engineering work.
    e(
      draft('CaseMadeActionable', {
        reviewerId: digits(r, 18),
        messageId: digits(r, 19),
        note: r() < 0.5 ? 'Worth fixing now.' : null,
      }),
    );
    assign();
    notice(`Task ${taskId} is working on it.`);
    prepare();
    for (const d of pending.splice(0)) post(d, 0.08);
  }

  /** One receipt thread per Discord thread: a reply in a thread does not get a receipt of its own. */
  const threads = () =>
    sources.filter(
      (s, i) =>
        sources.findIndex(
          (x) => (x.place.threadId ?? x.place.messageId) === (s.place.threadId ?? s.place.messageId),
        ) === i,
    );
  let pushed = false;
  let proofs = 0;
  /** The receipt the case awaits review with. */
  let shown = '';
  /** Checks, push, evidence, receipt, gate and routing: the proven revision once the case awaits review, else null. */
  const prove = (rebased: string | null): string | null => {
    const n = proofs++;
    const revision = rebased ?? hex(r, 40);
    const passed = rebased !== null || r() < 0.85;
    const logSha = hex(r, 64);
    const results = [
      {
        name: 'lint',
        kind: 'lint' as const,
        outcome: 'passed' as const,
        revision,
        durationMs: 900 + n,
        exitCode: 0,
        outputSha256: hex(r, 64),
        outputBytes: 120,
      },
      {
        name: 'unit',
        kind: 'focused_test' as const,
        outcome: passed ? ('passed' as const) : ('failed' as const),
        revision,
        durationMs: 4100,
        exitCode: passed ? 0 : 1,
        outputSha256: logSha,
        outputBytes: 2048,
      },
    ];
    e(draft('ChecksCompleted', { taskId, revision, targetHead: head, passed, results }));
    if (!passed) {
      const detail = 'The focused test still fails.';
      e(draft('BlockerRaised', { taskId, kind: 'checks_failing', detail }));
      post(
        ask(
          'blocker',
          first,
          `blocker-${caseId}-${n}`,
          `Case ${caseId} is blocked (checks failing): ${detail}`,
        ),
        0.08,
      );
      return null;
    }
    e(
      draft('BranchPushed', {
        taskId,
        branch,
        revision,
        baseRevision: head,
        created: !pushed,
        draftPullRequestUrl: null,
      }),
    );
    pushed = true;
    const artifactId = `log-1-${logSha.slice(0, 16)}`;
    const key = `checks/${caseId}/${revision}/${logSha}.log`;
    e(
      draft('ArtifactReviewed', {
        artifactId,
        kind: 'check_log',
        sha256: logSha,
        decision: 'cleared',
        redactions: [],
        basis: 'no private content found',
      }),
    );
    e(
      draft('ArtifactStored', {
        artifactId,
        kind: 'check_log',
        key,
        sha256: logSha,
        bytes: 2048,
        contentType: 'text/plain',
        revision,
        captureId: null,
        leaseToken: null,
      }),
    );
    const receiptId = `R${tag}${index}x${n}`;
    const rendered = `Receipt for ${caseId}: checks passed on ${revision}.`;
    e(
      draft('ReceiptBuilt', {
        receiptId,
        taskId,
        revision,
        outcome: 'pr_ready',
        checks: results,
        client: { flow: null, outcome: 'not_declared', captureIds: [] },
        evidence: [{ key, sha256: logSha, kind: 'check_log', shareable: true }],
        residualRisk: 'None known.',
        humanAction: 'Review the branch and merge it.',
        rendered,
        builtAt: at(),
      }),
    );
    // Before the receipt is judged, the worker confirms the proof still stands on the target head.
    e(
      draft('TargetRevisionChecked', {
        taskId,
        recorded: head,
        head,
        outcome: 'same',
        rebasedRevision: null,
      }),
    );
    const ok = { ok: true, detail: 'ok' };
    e(
      draft('GateEvaluated', {
        taskId,
        revision,
        targetHead: head,
        claims: { checks: ok, revision: ok, client: ok, evidence: ok },
        complete: true,
        outcome: 'pr_ready',
      }),
    );
    const routed = threads().map((s) =>
      ask('receipt', s, `receipt-${receiptId}-${s.sourceId}`, rendered, receiptId),
    );
    // A receipt that could not be posted everywhere keeps the case from review (the monitor flags it).
    if (!routed.map((d) => post(d, 0.015)).every(Boolean)) return null;
    e(draft('CaseAwaitingReview', { receiptId, confirmedSources: routed.map((d) => d.sourceId) }));
    shown = receiptId;
    return revision;
  };

  let revision = prove(null);
  let revisions = 0;
  let moved = false;
  while (revision) {
    if (!moved && r() < 0.15) {
      // The target branch moves while the case waits: the proof goes stale and the same task proves again.
      moved = true;
      const next = hex(r, 40);
      const rebased = hex(r, 40);
      e(
        draft('TargetRevisionChecked', {
          taskId,
          recorded: head,
          head: next,
          outcome: 'moved',
          rebasedRevision: rebased,
        }),
      );
      e(draft('ProofMarkedStale', { taskId, provenRevision: revision, targetHead: next }));
      e(
        draft('TaskResumed', {
          taskId,
          reason: 'stale_proof',
          note: `The target branch moved to ${next}; rebase and prove again.`,
        }),
      );
      // Every thread shown the receipt is told it is out of date.
      const told = threads().map((s) =>
        ask(
          'notice',
          s,
          `stale-${shown}-${s.sourceId}`,
          `The receipt above is out of date; a new one will follow.`,
        ),
      );
      head = next;
      e(
        draft('TargetRevisionChecked', {
          taskId,
          recorded: head,
          head,
          outcome: 'same',
          rebasedRevision: null,
        }),
      );
      for (const d of told) post(d, 0.08);
      revision = prove(rebased);
      continue;
    }
    const pick = r();
    const decision =
      revisions < loops ? 'revise' : pick < 0.7 ? 'approve' : pick < 0.85 ? 'reject' : 'revise';
    const reviewerId = digits(r, 18);
    const messageId = digits(r, 19);
    const text =
      decision === 'revise'
        ? 'Please also cover the empty list.'
        : decision === 'reject'
          ? 'Not the fix we want.'
          : null;
    e(draft('ReviewerDecided', { reviewerId, messageId, decision, text }));
    if (decision === 'revise') {
      e(draft('RevisionRequested', { reviewerId, text: text as string }));
      e(draft('TaskResumed', { taskId, reason: 'revision_requested', note: text }));
      post(
        ask(
          'notice',
          first,
          `notice-${messageId}`,
          `Revision requested by <@${reviewerId}>; task ${taskId} resumes with it.`,
        ),
        0.08,
      );
      if (revisions++ >= loops) return steps;
      e(
        draft('TargetRevisionChecked', {
          taskId,
          recorded: head,
          head,
          outcome: 'same',
          rebasedRevision: null,
        }),
      );
      revision = prove(null);
      continue;
    }
    if (decision === 'approve') e(draft('CaseApproved', { reviewerId, branch, revision }));
    else {
      e(draft('CaseRejected', { reviewerId, reason: text }));
      e(draft('TaskCancelled', { taskId, reason: 'rejected by a reviewer' }));
    }
    e(
      draft('WorktreeRemoved', {
        taskId,
        worktree: caseId,
        reason: decision === 'approve' ? 'approved' : 'rejected',
      }),
    );
    const told = threads().map((s) =>
      ask(
        'decision',
        s,
        `decision-${messageId}-${s.sourceId}`,
        `Case ${caseId} was ${decision === 'approve' ? 'approved' : 'rejected'} by <@${reviewerId}>.`,
      ),
    );
    for (const d of told) post(d, 0.08);
    return steps;
  }
  return steps;
}

function forgetFirstSource(q: Step[]): void {
  const at = q.findIndex((s) => s.draft.type === 'SourceReceived');
  const received = q[at];
  if (!received || received.draft.type !== 'SourceReceived') return;
  q.splice(at + 2, 0, {
    aggregate: 'source',
    aggregateId: received.aggregateId,
    producer: 'intake',
    draft: draft('SourceForgotten', {
      sourceId: received.aggregateId,
      keyId: received.draft.data.sealed?.keyId ?? null,
      reason: 'message_deleted',
    }),
  });
}

/** Each case's steps, interleaved at random with the other open cases (each case keeps its own order). */
export function generateHistory(opts: GenerateOptions): { events: LedgerEvent[]; caseIds: string[] } {
  const r = rng(opts.seed ?? 1);
  const tag = (opts.seed ?? 1).toString(36).toUpperCase();
  const life = opts.variety ? variedLifecycle : lifecycle;
  const queues = Array.from({ length: opts.cases }, (_, i) => life(r, i, opts.revisionLoops ?? 0, tag));
  // Some first reports are forgotten later (their raw text's key deleted): the sources rows say so.
  if (opts.variety) queues.forEach((q, i) => i % 7 === 3 && forgetFirstSource(q));
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
