import { eventDefinition, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { checkLogArtifactId } from '../validation/evidence.decider';
import { buildReceipt, evidenceLinkPlaceholder, resolveEvidenceLinks } from './receipt.builder';

const CASE = 'C01JRECEIPT00000000000000000';
const REV = '1'.repeat(40);
const OLD = '0'.repeat(40);
const SHA = (c: string) => c.repeat(64);
const SECRET = 'ghp_Zx8QwErTy1234567890AbCdEfGhIjKlMnOpQ';
const EMAIL = 'jane.doe@customer-example.org';

/** Given: events as the ledger would hand them back (validated by their schemas). */
function ledger(drafts: EventDraft[]): RecordedEvent[] {
  return drafts.map((d, i) => {
    const def = eventDefinition(d.type);
    if (!def) throw new Error(d.type);
    return {
      eventId: `cmd${i}:0`,
      type: d.type,
      version: def.version,
      aggregate: 'case',
      aggregateId: CASE,
      producer: def.producer,
      commandId: `cmd${i}`,
      causationId: null,
      correlationId: 'corr',
      occurredAt: '2026-11-29T20:00:00.000Z',
      data: def.schema.parse(d.data),
      seq: i + 1,
      subject: `caseloop.case.${CASE}.${def.producer}`,
    } as RecordedEvent;
  });
}

const check = (name: string, revision = REV) => ({
  name,
  kind: 'focused_test' as const,
  outcome: 'passed' as const,
  revision,
  durationMs: 10,
  exitCode: 0,
  outputSha256: SHA('a'),
  outputBytes: 100,
});

const opened: EventDraft = {
  type: 'CaseOpened',
  data: {
    sourceId: 'discord-1',
    place: { guildId: '1', channelId: '2', threadId: '3', messageId: '4' },
    reporterId: '5',
    title: `Checkout broken for ${EMAIL}`,
    confidence: 1,
    reasons: [],
  },
} as EventDraft;

const checksAt = (revision: string): EventDraft =>
  ({
    type: 'ChecksCompleted',
    data: {
      taskId: 'T1',
      revision,
      targetHead: OLD,
      results: [check('lint', revision), check('focused', revision)],
      passed: true,
    },
  }) as EventDraft;

const stored = (
  artifactId: string,
  kind: 'check_log' | 'diff' | 'screenshot',
  sha: string,
  captureId: string | null = null,
  bytes = 10,
): EventDraft[] =>
  [
    {
      type: 'ArtifactReviewed',
      data: {
        artifactId,
        kind,
        sha256: sha,
        decision: kind === 'screenshot' ? 'needs_human' : 'redacted',
        redactions: kind === 'screenshot' ? [] : [{ category: 'github_token', count: 1 }],
        basis: 'test',
      },
    },
    {
      type: 'ArtifactStored',
      data: {
        artifactId,
        kind,
        key: `cases/${CASE}/${REV}/${sha}`,
        sha256: sha,
        bytes,
        contentType: 'text/plain',
        revision: REV,
        captureId,
        leaseToken: captureId ? 7 : null,
      },
    },
  ] as EventDraft[];

const clientPhase = (outcome: 'passed' | 'failed' | 'blocked', reason: string | null): EventDraft[] =>
  [
    {
      type: 'ClientValidationStarted',
      data: { taskId: 'T1', revision: REV, flow: 'caseloop/flow.js', resource: 'browser:default' },
    },
    {
      type: 'CaptureTaken',
      data: {
        taskId: 'T1',
        revision: REV,
        captureId: 'cap-1',
        resource: 'browser:default',
        leaseToken: 7,
        step: 'total-updated',
        page: { url: 'http://127.0.0.1:4000/', title: 'Cart' },
        sha256: SHA('c'),
        takenAt: '2026-11-29T20:00:01.000Z',
      },
    },
    { type: 'CaptureVoided', data: { captureId: 'cap-2', reason: 'lease_expired' } },
    {
      type: 'ClientValidationCompleted',
      data: {
        taskId: 'T1',
        revision: REV,
        outcome,
        reason,
        captureIds: outcome === 'blocked' ? [] : ['cap-1'],
      },
    },
  ] as EventDraft[];

const at = { receiptId: 'R1', builtAt: '2026-11-29T20:05:00.000Z' };

describe('buildReceipt', () => {
  it('is null until checks have passed', () => {
    expect(buildReceipt(ledger([opened]), at)).toBeNull();
  });

  it('states outcome, revision, checks, the flow and its captures, evidence and the decision asked for', () => {
    const events = ledger([
      opened,
      checksAt(OLD),
      checksAt(REV),
      ...clientPhase('passed', null),
      ...stored('log-1', 'check_log', SHA('d')),
      ...stored('cap-1', 'screenshot', SHA('c'), 'cap-1'),
    ]);
    const r = buildReceipt(events, at);
    expect(r).not.toBeNull();
    if (!r) return;
    expect(r.outcome).toBe('pr_ready');
    expect(r.revision).toBe(REV);
    expect(r.checks.map((c) => [c.name, c.outcome, c.revision])).toEqual([
      ['lint', 'passed', REV],
      ['focused', 'passed', REV],
    ]);
    expect(r.client).toEqual({ flow: 'caseloop/flow.js', outcome: 'passed', captureIds: ['cap-1'] });
    expect(r.evidence).toEqual([
      { key: `cases/${CASE}/${REV}/${SHA('d')}`, sha256: SHA('d'), kind: 'check_log', shareable: true },
      { key: `cases/${CASE}/${REV}/${SHA('c')}`, sha256: SHA('c'), kind: 'screenshot', shareable: false },
    ]);
    expect(r.residualRisk).toContain('1 capture(s) void (lease expired)');
    expect(r.residualRisk).toContain('await a reviewer');
    expect(r.rendered).toContain(evidenceLinkPlaceholder(`cases/${CASE}/${REV}/${SHA('d')}`));
    expect(r.rendered).not.toContain(evidenceLinkPlaceholder(`cases/${CASE}/${REV}/${SHA('c')}`));
    expect(r.rendered).toContain('awaiting privacy approval');
    expect(r.rendered).toContain('`total-updated` capture `cap-1` under lease 7');
    expect(r.rendered).toMatch(/approve.*revise.*reject/s);
    expect(r.rendered.length).toBeLessThan(6000);
  });

  it('links a screenshot once a reviewer approved its digest', () => {
    const events = ledger([
      checksAt(REV),
      ...clientPhase('passed', null),
      ...stored('cap-1', 'screenshot', SHA('c'), 'cap-1'),
      {
        type: 'PrivacyApproved',
        data: { reviewerId: '9', messageId: '10', artifactSha256: SHA('c') },
      } as EventDraft,
    ]);
    expect(buildReceipt(events, at)?.evidence[0]?.shareable).toBe(true);
  });

  it('says "implemented; client verification blocked" with the reason when the client could not run', () => {
    const r = buildReceipt(
      ledger([checksAt(REV), ...clientPhase('blocked', 'no executable browser at /nope')]),
      at,
    );
    expect(r?.outcome).toBe('implemented_client_blocked');
    expect(r?.rendered).toContain('implemented; client verification blocked');
    expect(r?.residualRisk).toContain('no executable browser at /nope');
  });

  it('is blocked when the client flow failed or evidence was not durable', () => {
    expect(
      buildReceipt(ledger([checksAt(REV), ...clientPhase('failed', 'assertion failed')]), at)?.outcome,
    ).toBe('blocked');
    const lost = ledger([
      checksAt(REV),
      ...clientPhase('passed', null),
      {
        type: 'ArtifactDurabilityFailed',
        data: {
          artifactId: 'log-1',
          key: `cases/${CASE}/${REV}/${SHA('e')}`,
          expected: SHA('e'),
          actual: SHA('f'),
        },
      } as EventDraft,
    ]);
    const r = buildReceipt(lost, at);
    expect(r?.outcome).toBe('blocked');
    expect(r?.residualRisk).toContain('failed read-back verification');
  });

  it('never carries Discord content and scrubs a secret or an email that reached a reason', () => {
    const r = buildReceipt(
      ledger([opened, checksAt(REV), ...clientPhase('failed', `expected ${EMAIL} token ${SECRET}`)]),
      at,
    );
    expect(r).not.toBeNull();
    const all = JSON.stringify(r);
    expect(r?.rendered).not.toContain(EMAIL);
    expect(r?.rendered).not.toContain(SECRET);
    expect(r?.rendered).toContain('[redacted:email]');
    expect(all).not.toContain('Checkout broken');
  });

  it('links to the evidence service when its public URL is known', () => {
    const events = ledger([
      checksAt(REV),
      ...clientPhase('passed', null),
      ...stored('log-1', 'check_log', SHA('d')),
    ]);
    const r = buildReceipt(events, { ...at, linkBase: 'https://evidence.example/' });
    expect(r?.rendered).toContain(`<https://evidence.example/evidence/cases/${CASE}/${REV}/${SHA('d')}>`);
    expect(r?.rendered).not.toContain('{{evidence-link:');
  });

  describe('check output', () => {
    const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    const output = (name: string, kind: 'format' | 'lint' | 'focused_test', sha: string, bytes: number) => ({
      ...check(name),
      kind,
      outputSha256: sha,
      outputBytes: bytes,
    });
    const run: EventDraft = {
      type: 'ChecksCompleted',
      data: {
        taskId: 'T1',
        revision: REV,
        targetHead: OLD,
        results: [
          output('format', 'format', EMPTY, 0),
          output('lint', 'lint', EMPTY, 0),
          output('focused', 'focused_test', SHA('d'), 120),
        ],
        passed: true,
      },
    } as EventDraft;
    const proof = (): RecordedEvent[] =>
      ledger([
        run,
        ...clientPhase('passed', null),
        ...stored(checkLogArtifactId(0, EMPTY), 'check_log', EMPTY, null, 0),
        ...stored(checkLogArtifactId(1, EMPTY), 'check_log', EMPTY, null, 0),
        ...stored(checkLogArtifactId(2, SHA('d')), 'check_log', SHA('d'), null, 120),
        ...stored('diff-1', 'diff', SHA('e'), null, 300),
        ...stored('cap-1', 'screenshot', SHA('c'), 'cap-1', 40_000),
        {
          type: 'PrivacyApproved',
          data: { reviewerId: '9', messageId: '10', artifactSha256: SHA('c') },
        } as EventDraft,
      ]);

    it('leaves an empty output out of the evidence and says "no output" on its check instead', () => {
      const r = buildReceipt(proof(), at);
      if (!r) throw new Error('no receipt');
      expect(r.checks.map((c) => [c.name, c.outputSha256])).toEqual([
        ['format', EMPTY],
        ['lint', EMPTY],
        ['focused', SHA('d')],
      ]);
      expect(r.evidence.map((e) => [e.kind, e.sha256])).toEqual([
        ['check_log', SHA('d')],
        ['diff', SHA('e')],
        ['screenshot', SHA('c')],
      ]);
      expect(r.rendered).not.toContain(EMPTY.slice(0, 12));
      expect(r.rendered).toContain('`format` (format) passed · no output\n');
      expect(r.rendered).toContain('`lint` (lint) passed · no output\n');
    });

    it("links each check's log from its own line and lists the rest once, the screenshot named by its step", () => {
      const r = buildReceipt(proof(), at);
      if (!r) throw new Error('no receipt');
      const log = evidenceLinkPlaceholder(`cases/${CASE}/${REV}/${SHA('d')}`);
      expect(r.rendered).toContain(`**Checks** — 3/3 passed on \`${REV.slice(0, 12)}\``);
      expect(r.rendered).toContain(`\`focused\` (focused_test) passed · [log](${log})\n`);
      expect(r.rendered.split(log)).toHaveLength(2);
      expect(r.rendered).toContain(
        `- diff [sha256:${SHA('e').slice(0, 12)}](${evidenceLinkPlaceholder(`cases/${CASE}/${REV}/${SHA('e')}`)})`,
      );
      expect(r.rendered).toContain(
        `- screenshot of \`total-updated\` [sha256:${SHA('c').slice(0, 12)}](${evidenceLinkPlaceholder(`cases/${CASE}/${REV}/${SHA('c')}`)})`,
      );
    });

    it('names the revision on each check line only when the checks ran on different revisions', () => {
      const mixed = {
        ...run,
        data: {
          ...(run.data as object),
          results: [output('format', 'format', EMPTY, 0), { ...check('old', OLD) }],
        },
      } as EventDraft;
      const r = buildReceipt(ledger([mixed]), at);
      expect(r?.rendered).toContain('**Checks** — 2/2 passed\n');
      expect(r?.rendered).toContain(
        `\`old\` (focused_test) passed on \`${OLD.slice(0, 12)}\` · log not stored`,
      );
    });

    it("fits one Discord message (2000 characters) with the sandbox's links", () => {
      const five: EventDraft = {
        ...run,
        data: {
          ...(run.data as object),
          results: [
            output('format', 'format', EMPTY, 0),
            output('lint', 'lint', EMPTY, 0),
            output('focused', 'focused_test', SHA('d'), 120),
            output('regression', 'focused_test', SHA('a'), 120),
            output('build', 'focused_test', SHA('b'), 120),
          ],
        },
      } as EventDraft;
      const events = ledger([
        five,
        ...clientPhase('passed', null),
        ...stored(checkLogArtifactId(2, SHA('d')), 'check_log', SHA('d'), null, 120),
        ...stored(checkLogArtifactId(3, SHA('a')), 'check_log', SHA('a'), null, 120),
        ...stored(checkLogArtifactId(4, SHA('b')), 'check_log', SHA('b'), null, 120),
        ...stored('diff-1', 'diff', SHA('e'), null, 300),
        ...stored('cap-1', 'screenshot', SHA('c'), 'cap-1', 40_000),
      ]);
      const full = buildReceipt(events, {
        ...at,
        receiptId: 'receipt-18',
        linkBase: 'http://127.0.0.1:44391',
      });
      expect(full?.rendered.length).toBeLessThanOrEqual(2000);
      expect(full?.rendered).toContain('**Your decision:**');
    });
  });

  describe('an honest receipt: every attempt, the escalation, time per stage, reported usage, log head and tail', () => {
    const attempt = (n: number, kind: 'normal' | 'escalation', route: string): EventDraft =>
      ({
        type: 'AttemptStarted',
        data: {
          taskId: 'T1',
          attemptId: `T1-a${n}`,
          attempt: n,
          route: { name: route, kind },
          fromCleanTree: kind === 'escalation',
        },
      }) as EventDraft;
    const finished = (
      n: number,
      kind: 'normal' | 'escalation',
      route: string,
      failed: string | null,
      usage: unknown,
    ): EventDraft =>
      ({
        type: 'AttemptFinished',
        data: {
          taskId: 'T1',
          attemptId: `T1-a${n}`,
          route: { name: route, kind },
          durationMs: 60_000 * n,
          outcome: 'changed',
          exitCode: 0,
          diffSha256: SHA(String(n)),
          diffBytes: 10,
          checks: failed ? [{ ...check(failed), outcome: 'failed' }] : [check('focused')],
          firstFailedFocusedCheck: failed,
          revision: REV,
          usage,
        },
      }) as EventDraft;
    const claude = (cost: number, input: number, output: number) => ({
      reportedBy: 'claude_code',
      costUsd: cost,
      inputTokens: input,
      cachedInputTokens: null,
      outputTokens: output,
    });
    const excerpt: EventDraft = {
      type: 'CheckFinished',
      data: {
        taskId: 'T1',
        index: 1,
        total: 2,
        attemptId: 'T1-a3',
        result: check('focused'),
        excerpt: {
          head: ['TAP version 13', 'ok 1 total'],
          tail: ['# pass 1204', '# fail 0'],
          omittedLines: 2400,
        },
        logKey: `checks/${CASE}/${REV}/${SHA('a')}.log`,
      },
    } as EventDraft;
    const assigned: EventDraft = {
      type: 'TaskAssigned',
      data: {
        taskId: 'T1',
        repository: 'shop',
        targetBranch: 'main',
        targetRevision: null,
        brief: 'Fix it.',
      },
    } as EventDraft;
    const prepared: EventDraft = {
      type: 'WorktreePrepared',
      data: { taskId: 'T1', worktree: CASE, branch: `caseloop/${CASE}`, baseRevision: OLD, reused: false },
    } as EventDraft;
    const history = () => {
      const drafts = [
        opened,
        assigned,
        prepared,
        attempt(1, 'normal', 'fast'),
        finished(1, 'normal', 'fast', 'cart', claude(0.1, 1000, 100)),
        attempt(2, 'normal', 'fast'),
        finished(2, 'normal', 'fast', 'cart', null),
        {
          type: 'EscalationUsed',
          data: {
            taskId: 'T1',
            route: { name: 'strong', kind: 'escalation' },
            failedAttemptIds: ['T1-a1', 'T1-a2'],
            focusedCheck: 'cart',
          },
        } as EventDraft,
        attempt(3, 'escalation', 'strong'),
        finished(3, 'escalation', 'strong', null, claude(0.32, 220_000, 3_100)),
        excerpt,
        checksAt(REV),
      ];
      // Times as they passed: the report at 20:00:00, the task 4 s later, the worktree 2 s after that.
      const times = [0, 4, 6, 10, 70, 80, 200, 201, 202, 400, 450, 460].map((s) =>
        new Date(Date.parse('2026-11-29T20:00:00.000Z') + s * 1000).toISOString(),
      );
      return ledger(drafts).map((e, i) => ({ ...e, occurredAt: times[i] as string }));
    };

    it('lists the attempts with the check each failed, the escalation, the time per stage and the usage reported', () => {
      const r = buildReceipt(history(), { receiptId: 'R2', builtAt: '2026-11-29T20:08:00.000Z' });
      if (!r) throw new Error('no receipt');
      expect(r.attempts).toEqual([
        {
          attempt: 1,
          route: 'fast',
          kind: 'normal',
          result: 'failed',
          failedCheck: 'cart',
          durationMs: 60_000,
          costUsd: 0.1,
          inputTokens: 1000,
          outputTokens: 100,
        },
        {
          attempt: 2,
          route: 'fast',
          kind: 'normal',
          result: 'failed',
          failedCheck: 'cart',
          durationMs: 120_000,
          costUsd: null,
          inputTokens: null,
          outputTokens: null,
        },
        {
          attempt: 3,
          route: 'strong',
          kind: 'escalation',
          result: 'passed',
          failedCheck: null,
          durationMs: 180_000,
          costUsd: 0.32,
          inputTokens: 220_000,
          outputTokens: 3_100,
        },
      ]);
      expect(r.escalation).toEqual({ route: 'strong', focusedCheck: 'cart', afterAttempts: [1, 2] });
      expect(r.stages).toEqual([
        { stage: 'report_to_task', ms: 4_000 },
        { stage: 'worktree', ms: 2_000 },
        { stage: 'agent', ms: 360_000 },
        { stage: 'checks', ms: 20 },
        { stage: 'proof', ms: 20_000 },
        { stage: 'total', ms: 480_000 },
      ]);
      expect(r.rendered).toContain(
        '**Attempts** — 3: #1 `fast` failed `cart` · #2 `fast` failed `cart` · #3 `strong` (escalation) passed the checks',
      );
      expect(r.rendered).toContain('**Escalation:** `strong` after #1 and #2 failed `cart`');
      expect(r.rendered).toContain(
        '**Agent usage:** $0.42, 221.0k tokens in, 3.2k out (as reported by claude_code); 1 attempt(s) reported nothing',
      );
      expect(r.rendered).toContain(
        '**Time** — 8 min 00 s: report → task 4 s · worktree 2 s · agent 6 min 00 s · checks 20 ms · proof 20 s',
      );
      // The log's first and last line under its check, the lines between counted.
      expect(r.rendered).toContain('> `TAP version 13` … 2402 lines … `# fail 0`');
    });

    it('says so when no runtime reported its usage', () => {
      const events = history().map((e) =>
        e.type === 'AttemptFinished' ? ({ ...e, data: { ...e.data, usage: null } } as RecordedEvent) : e,
      );
      expect(buildReceipt(events, at)?.rendered).toContain('**Agent usage:** not reported by the runtime');
    });

    it('reads a receipt written before attempts and stages were recorded (v1)', () => {
      const def = eventDefinition('ReceiptBuilt');
      const v1 = {
        receiptId: 'R0',
        taskId: 'T1',
        revision: REV,
        outcome: 'pr_ready',
        checks: [],
        client: { flow: null, outcome: 'not_declared', captureIds: [] },
        evidence: [],
        residualRisk: 'x',
        humanAction: 'y',
        rendered: 'z',
        builtAt: at.builtAt,
      };
      const up = def?.upcasters[1]?.(v1);
      expect(def?.schema.parse(up)).toMatchObject({ attempts: [], escalation: null, stages: [] });
    });
  });

  it('resolves link placeholders with links minted at delivery', async () => {
    const key = `cases/${CASE}/${REV}/${SHA('d')}`;
    const text = `a ${evidenceLinkPlaceholder(key)} b ${evidenceLinkPlaceholder(key)}`;
    await expect(resolveEvidenceLinks(text, async (k) => `https://s3.example/${k}?sig=1`)).resolves.toBe(
      `a <https://s3.example/${key}?sig=1> b <https://s3.example/${key}?sig=1>`,
    );
  });
});
