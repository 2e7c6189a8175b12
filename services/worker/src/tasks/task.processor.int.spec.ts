import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkOutputArtifactPath, draft, RecordedEvent } from '@caseloop/contracts';
import { TargetRepository } from '@caseloop/target-repositories';
import { eventually } from '@caseloop/testing';
import { ProcessGroups } from '../processes/process-groups';
import { AgentRuntime } from '../runtimes/agent-runtime';
import { git, TestRemote } from '../worktrees/test-repository.fixture';
import { WorkerStopping } from './task.processor';
import {
  caseOpened,
  ofType,
  stepDir,
  taskAssigned,
  WorkerHarness,
  workerHarness,
} from './task-processor.fixture';

jest.setTimeout(120_000);

let h: WorkerHarness;
let remote: TestRemote;
let repo: TargetRepository;
let base: string;
let counter = 0;
const ids = () => {
  counter += 1;
  return {
    caseId: `Cproc${counter}${Date.now().toString(36)}`,
    taskId: `Tproc${counter}${Date.now().toString(36)}`,
  };
};
const cause = (caseId: string) => ({ eventId: `cause-${caseId}`, correlationId: `corr-${caseId}` });
/** The worker's steps; each check's progress (CheckStarted, CheckFinished) is asserted on its own. */
const types = (events: RecordedEvent[]) =>
  events
    .filter((e) => e.producer === 'worker' && e.type !== 'CheckStarted' && e.type !== 'CheckFinished')
    .map((e) => e.type);

/** The focused check passes once app.txt says "fixed"; a noisy regression check prints about 2 MB. */
const checks: TargetRepository['checks'] = [
  { name: 'cart', kind: 'focused_test', command: ['sh', '-c', 'grep -q fixed app.txt'], timeoutMs: 10_000 },
  {
    name: 'noisy',
    kind: 'regression_test',
    command: ['sh', '-c', 'yes regression-ok | head -c 2000000'],
    timeoutMs: 20_000,
  },
];

const scripted = (steps: unknown[], name = 'scripted-normal') => ({
  name,
  runtime: { kind: 'scripted', steps },
  timeoutMs: 20_000,
});

beforeAll(async () => {
  h = await workerHarness();
  remote = new TestRemote(join(h.root, 'remote'));
  base = remote.commit({ 'app.txt': 'broken\n', 'README.md': 'shop\n' }, 'initial');
  repo = { id: 'shop', url: remote.origin, targetBranch: 'main', checks };
});
afterAll(() => h?.cleanup());

async function assign(
  caseId: string,
  taskId: string,
  over: Parameters<typeof taskAssigned>[0] | object = {},
) {
  await h.coordinator(caseId, [
    caseOpened('Cart total is off by one'),
    taskAssigned({ taskId, repository: 'shop', targetRevision: base, ...over }),
  ]);
}

describe('the task processor on a real ledger and real git', () => {
  it('carries a task to a pushed PR-ready branch and does nothing more when the event is redelivered', async () => {
    const { caseId, taskId } = ids();
    const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
    const p = await h.processor({ repositories: [repo], routes: { normal: scripted([{ copy: fix }]) } });
    await assign(caseId, taskId);

    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    const events = await h.events(caseId);
    expect(types(events)).toEqual([
      'WorktreePrepared',
      'AttemptStarted',
      'AttemptFinished',
      'ChecksCompleted',
      'BranchPushed',
    ]);
    const [finished] = ofType(events, 'AttemptFinished');
    const [completed] = ofType(events, 'ChecksCompleted');
    const [pushed] = ofType(events, 'BranchPushed');
    expect(finished!.data).toMatchObject({ outcome: 'changed', exitCode: 0, firstFailedFocusedCheck: null });
    expect(finished!.data.diffSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(completed!.data).toMatchObject({
      passed: true,
      targetHead: base,
      revision: finished!.data.revision,
    });
    expect(completed!.data.results.every((r) => r.revision === finished!.data.revision)).toBe(true);
    expect(pushed!.data).toMatchObject({
      branch: `caseloop/${caseId}`,
      revision: finished!.data.revision,
      baseRevision: base,
      created: true,
    });
    expect(remote.ref(`refs/heads/caseloop/${caseId}`)).toBe(pushed!.data.revision);
    expect(git(remote.origin, 'log', '-1', '--format=%s', `caseloop/${caseId}`)).toBe(
      `caseloop: Cart total is off by one (case ${caseId})`,
    );

    // each check's start and end were recorded as it ran, between the attempt and the check run
    const progress = events.filter((e) => e.type === 'CheckStarted' || e.type === 'CheckFinished');
    expect(
      progress.map((e) =>
        e.type === 'CheckStarted'
          ? `start ${e.data.name}`
          : e.type === 'CheckFinished'
            ? `end ${e.data.result.name} ${e.data.result.outcome}`
            : '',
      ),
    ).toEqual(['start cart', 'end cart passed', 'start noisy', 'end noisy passed']);
    expect(progress.every((e) => e.seq > finished!.seq - 5 && e.seq < completed!.seq)).toBe(true);
    const [, noisyEnd] = ofType(events, 'CheckFinished');
    expect(noisyEnd!.data).toMatchObject({ index: 1, total: 2, attemptId: finished!.data.attemptId });
    expect(noisyEnd!.data.excerpt.head[0]).toBe('regression-ok');
    expect(noisyEnd!.data.excerpt.omittedLines).toBeGreaterThan(100_000);

    // the noisy check's 2 MB is stored whole, in the check-log bucket, addressed by its digest
    const noisy = completed!.data.results.find((r) => r.name === 'noisy')!;
    const artifact = await h.readLog(checkOutputArtifactPath(caseId, noisy.revision, noisy.outputSha256!));
    expect(noisyEnd!.data.logKey).toBe(checkOutputArtifactPath(caseId, noisy.revision, noisy.outputSha256!));
    expect(artifact.length).toBe(noisy.outputBytes);
    expect(artifact.length).toBe(2_000_000);

    const before = events.length;
    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    expect((await h.events(caseId)).length).toBe(before);
  });

  it('gives two cases in parallel two worktrees that never see each other’s files', async () => {
    const a = ids();
    const b = ids();
    const p = await h.processor({
      repositories: [
        {
          ...repo,
          checks: [
            {
              name: 'alone',
              kind: 'focused_test',
              command: ['sh', '-c', 'test "$(ls case-*.txt | wc -l)" -eq 1'],
              timeoutMs: 10_000,
            },
          ],
        },
      ],
      routes: {
        normal: {
          name: 'writer',
          runtime: {
            kind: 'command',
            argv: ['sh', '-c', 'sleep 0.3; basename "$PWD" > "case-$(basename "$PWD").txt"'],
          },
          timeoutMs: 20_000,
        },
      },
    });
    await Promise.all([assign(a.caseId, a.taskId), assign(b.caseId, b.taskId)]);
    const outcomes = await Promise.all([
      p.process(a.caseId, cause(a.caseId)),
      p.process(b.caseId, cause(b.caseId)),
    ]);
    if (outcomes.some((o) => o !== 'pr_ready')) {
      // Say why: the blocker's kind and detail, not only that one case did not get there.
      const blockers = [...(await h.events(a.caseId)), ...(await h.events(b.caseId))]
        .filter((e) => e.type === 'BlockerRaised')
        .map((e) => `${e.aggregateId}: ${JSON.stringify(e.data)}`);
      throw new Error(`outcomes ${outcomes.join(', ')}; ${blockers.join('; ') || 'no blocker recorded'}`);
    }
    expect(outcomes).toEqual(['pr_ready', 'pr_ready']);
    const wa = join(h.workDir, 'worktrees', a.caseId);
    const wb = join(h.workDir, 'worktrees', b.caseId);
    expect((await readdir(wa)).filter((f) => f.startsWith('case-'))).toEqual([`case-${a.caseId}.txt`]);
    expect((await readdir(wb)).filter((f) => f.startsWith('case-'))).toEqual([`case-${b.caseId}.txt`]);
  });

  it('resumes an interrupted attempt after a restart, in the same worktree, without repeating finished work', async () => {
    const { caseId, taskId } = ids();
    await assign(caseId, taskId);
    const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
    const routes = { normal: scripted([{ copy: fix }]) };
    const crashing: AgentRuntime = {
      kind: 'crash',
      async run(input) {
        await writeFile(join(input.worktree, 'half-written.txt'), 'partial');
        throw new Error('the worker process died here');
      },
    };
    const first = await h.processor({ repositories: [repo], routes, runtimeFor: () => crashing });
    await expect(first.process(caseId, cause(caseId))).rejects.toThrow('the worker process died here');
    expect(types(await h.events(caseId))).toEqual(['WorktreePrepared', 'AttemptStarted']);
    const worktree = join(h.workDir, 'worktrees', caseId);
    expect(existsSync(join(worktree, 'half-written.txt'))).toBe(true);

    const restarted = await h.processor({ repositories: [repo], routes });
    await h.coordinator(caseId, [draft('TaskResumed', { taskId, reason: 'worker_restart', note: null })]);
    expect(await restarted.process(caseId, cause(caseId))).toBe('pr_ready');
    const events = await h.events(caseId);
    expect(types(events)).toEqual([
      'WorktreePrepared',
      'AttemptStarted',
      'TargetRevisionChecked',
      'AttemptFinished',
      'ChecksCompleted',
      'BranchPushed',
    ]);
    expect(ofType(events, 'AttemptFinished')[0]!.data.attemptId).toBe(
      ofType(events, 'AttemptStarted')[0]!.data.attemptId,
    );
    expect(ofType(events, 'TargetRevisionChecked')[0]!.data.outcome).toBe('same');
    expect(existsSync(join(worktree, 'half-written.txt'))).toBe(false);
    expect(await readFile(join(worktree, 'app.txt'), 'utf8')).toBe('fixed\n');
  });

  it('does not count an attempt killed by a shutdown: it stays started and runs again after the restart', async () => {
    const { caseId, taskId } = ids();
    await assign(caseId, taskId);
    const groups = new ProcessGroups();
    const marker = join(h.root, `started-${caseId}`);
    const slow = await h.processor({
      repositories: [repo],
      routes: {
        normal: {
          name: 'slow',
          runtime: { kind: 'command', argv: ['sh', '-c', `touch ${marker}; sleep 60`] },
          timeoutMs: 90_000,
        },
      },
      groups,
    });
    const running = slow.process(caseId, cause(caseId));
    await eventually(() => existsSync(marker), { timeoutMs: 30_000, what: 'the slow runtime started' });
    slow.stop();
    groups.killAll();
    await expect(running).rejects.toBeInstanceOf(WorkerStopping);
    expect(types(await h.events(caseId))).toEqual(['WorktreePrepared', 'AttemptStarted']);

    const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
    const restarted = await h.processor({
      repositories: [repo],
      routes: { normal: scripted([{ copy: fix }]) },
    });
    expect(await restarted.process(caseId, cause(caseId))).toBe('pr_ready');
    const finished = ofType(await h.events(caseId), 'AttemptFinished');
    expect(finished.map((f) => [f.data.attemptId, f.data.outcome])).toEqual([[`${taskId}-a1`, 'changed']]);
  });

  it('re-runs every check on the new revision when the target branch moved after the proof', async () => {
    const local = new TestRemote(join(h.root, `remote-moves-${Date.now()}`));
    const start = local.commit({ 'app.txt': 'broken\n' }, 'initial');
    const moving: TargetRepository = { ...repo, id: 'moving', url: local.origin };
    const { caseId, taskId } = ids();
    const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
    const p = await h.processor({ repositories: [moving], routes: { normal: scripted([{ copy: fix }]) } });
    await h.coordinator(caseId, [
      caseOpened('Moving target'),
      taskAssigned({ taskId, repository: 'moving', targetRevision: start }),
    ]);
    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    const proven = ofType(await h.events(caseId), 'ChecksCompleted')[0]!.data.revision;

    const moved = local.commit({ 'unrelated.txt': 'upstream work\n' }, 'upstream moves on');
    await h.coordinator(caseId, [
      draft('ProofMarkedStale', { taskId, provenRevision: proven, targetHead: moved }),
      draft('TaskResumed', { taskId, reason: 'stale_proof', note: null }),
    ]);
    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    const events = await h.events(caseId);
    const [checked] = ofType(events, 'TargetRevisionChecked');
    expect(checked!.data).toMatchObject({ recorded: start, head: moved, outcome: 'moved' });
    const rebased = checked!.data.rebasedRevision!;
    expect(git(local.origin, 'rev-parse', `${rebased}~1`)).toBe(moved);
    const completed = ofType(events, 'ChecksCompleted');
    expect(completed).toHaveLength(2);
    expect(completed[1]!.data).toMatchObject({ revision: rebased, targetHead: moved, passed: true });
    expect(completed[1]!.data.results.map((r) => r.revision)).toEqual([rebased, rebased]);
    expect(ofType(events, 'BranchPushed').at(-1)!.data).toMatchObject({
      revision: rebased,
      baseRevision: moved,
      created: true,
    });
    expect(local.ref(`refs/heads/caseloop/${caseId}`)).toBe(rebased);

    // a conflicting move: the rebase is aborted and a human is asked
    local.commit({ 'app.txt': 'rewritten upstream\n' }, 'upstream rewrites the same line');
    await h.coordinator(caseId, [draft('TaskResumed', { taskId, reason: 'stale_proof', note: null })]);
    expect(await p.process(caseId, cause(caseId))).toBe('blocked');
    const after = await h.events(caseId);
    expect(ofType(after, 'TargetRevisionChecked').at(-1)!.data.outcome).toBe('conflict');
    expect(ofType(after, 'BlockerRaised').at(-1)!.data.kind).toBe('conflict');
    expect(git(join(h.workDir, 'worktrees', caseId), 'status', '--porcelain')).toBe('');
  });

  it('escalates once, from a clean tree, after two distinct attempts failed the same focused check', async () => {
    const { caseId, taskId } = ids();
    const try1 = await stepDir(h.root, `t1-${caseId}`, { 'app.txt': 'try one\n', 'notes-1.txt': 'n' });
    const try2 = await stepDir(h.root, `t2-${caseId}`, { 'app.txt': 'try two\n' });
    const p = await h.processor({
      repositories: [repo],
      routes: {
        normal: scripted([{ copy: try1 }, { copy: try2 }]),
        // Refuses to work on a dirty tree: the earlier attempts' files must be gone.
        escalation: {
          name: 'strong',
          runtime: {
            kind: 'command',
            argv: ['sh', '-c', 'test ! -e notes-1.txt && grep -q broken app.txt && echo fixed > app.txt'],
          },
          timeoutMs: 20_000,
        },
        maxAttempts: 3,
      },
    });
    await assign(caseId, taskId);
    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    const events = await h.events(caseId);
    const escalations = ofType(events, 'EscalationUsed');
    expect(escalations).toHaveLength(1);
    expect(escalations[0]!.data).toMatchObject({
      focusedCheck: 'cart',
      failedAttemptIds: [`${taskId}-a1`, `${taskId}-a2`],
    });
    const starts = ofType(events, 'AttemptStarted').map((e) => e.data);
    expect(starts.map((s) => [s.attempt, s.route.kind, s.fromCleanTree])).toEqual([
      [1, 'normal', false],
      [2, 'normal', false],
      [3, 'escalation', true],
    ]);
    const finishes = ofType(events, 'AttemptFinished').map((e) => e.data);
    expect(finishes.map((f) => f.firstFailedFocusedCheck)).toEqual(['cart', 'cart', null]);
    expect(new Set(finishes.map((f) => f.diffSha256)).size).toBe(3);
    const branch = `caseloop/${caseId}`;
    expect(git(remote.origin, 'diff', '--name-only', base, branch)).toBe('app.txt');
  });

  it("stops at the case's cost budget with a truthful blocker, from the cost Claude Code itself reported", async () => {
    const { caseId, taskId } = ids();
    // A fake `claude` that behaves like the real one on the worker's arguments: reads the prompt,
    // edits the worktree (a wrong fix), prints its --output-format json result.
    const result = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      total_cost_usd: 0.61,
      usage: {
        input_tokens: 12,
        cache_creation_input_tokens: 800,
        cache_read_input_tokens: 5000,
        output_tokens: 420,
      },
      result: 'Changed app.txt.',
    });
    const binary = join(h.root, `claude-${caseId}`);
    await writeFile(
      binary,
      `#!/bin/sh\ncase "$*" in *"--output-format json"*) ;; *) exit 2;; esac\ncat > /dev/null\necho "still broken $$" > app.txt\ncat <<'EOF'\n${result}\nEOF\n`,
      { mode: 0o755 },
    );
    const p = await h.processor({
      repositories: [repo],
      routes: {
        normal: {
          name: 'claude',
          runtime: { kind: 'claude_code', binary, model: 'claude-sonnet-4-5' },
          timeoutMs: 20_000,
        },
        maxAttempts: 3,
        budget: { costUsd: 0.5 },
      },
    });
    await assign(caseId, taskId);
    expect(await p.process(caseId, cause(caseId))).toBe('blocked');
    const events = await h.events(caseId);
    expect(types(events)).toEqual([
      'WorktreePrepared',
      'AttemptStarted',
      'AttemptFinished',
      'ChecksCompleted',
      'BlockerRaised',
    ]);
    const [finished] = ofType(events, 'AttemptFinished');
    expect(finished!.data.usage).toEqual({
      reportedBy: 'claude_code',
      costUsd: 0.61,
      inputTokens: 5812,
      cachedInputTokens: 5000,
      outputTokens: 420,
    });
    const [blocker] = ofType(events, 'BlockerRaised');
    expect(blocker!.data.kind).toBe('budget_exhausted');
    expect(blocker!.data.detail).toContain(
      "The case's budget is spent: $0.61 of $0.50 reported by the runtimes.",
    );
    expect(blocker!.data.detail).toContain('1 attempt(s)');
    expect(blocker!.data.detail).toContain('$0.61 reported by 1 of 1 attempt(s)');
  });

  describe('bad input: clear blockers, and the worker stays up for other cases', () => {
    it('a repository that is not configured, or that is gone', async () => {
      const missing = ids();
      const gone = ids();
      const p = await h.processor({
        repositories: [repo, { ...repo, id: 'gone', url: join(h.root, 'no-such-remote.git') }],
        routes: { normal: scripted([]) },
      });
      await h.coordinator(missing.caseId, [
        caseOpened('x'),
        taskAssigned({ taskId: missing.taskId, repository: 'unknown' }),
      ]);
      await h.coordinator(gone.caseId, [
        caseOpened('y'),
        taskAssigned({ taskId: gone.taskId, repository: 'gone' }),
      ]);
      expect(await p.process(missing.caseId, cause(missing.caseId))).toBe('blocked');
      expect(await p.process(gone.caseId, cause(gone.caseId))).toBe('blocked');
      const [b1] = ofType(await h.events(missing.caseId), 'BlockerRaised');
      const [b2] = ofType(await h.events(gone.caseId), 'BlockerRaised');
      expect(b1!.data).toMatchObject({ kind: 'repository_unavailable' });
      expect(b1!.data.detail).toContain('"unknown" is not configured');
      expect(b2!.data).toMatchObject({ kind: 'repository_unavailable' });
      expect(b2!.data.detail).toContain('repository "gone" failed');
    });

    it.each(['main;rm -rf /', '../main', 'main branch', '$(id)'])(
      'a target branch %j',
      async (targetBranch) => {
        const { caseId, taskId } = ids();
        const p = await h.processor({ repositories: [repo], routes: { normal: scripted([]) } });
        await h.coordinator(caseId, [
          caseOpened('x'),
          taskAssigned({ taskId, repository: 'shop', targetBranch }),
        ]);
        expect(await p.process(caseId, cause(caseId))).toBe('blocked');
        expect(ofType(await h.events(caseId), 'BlockerRaised')[0]!.data.kind).toBe('invalid_input');
        expect(existsSync(join(h.workDir, 'worktrees', caseId))).toBe(false);
      },
    );

    it('an unsafe case id is refused before anything is touched', async () => {
      const p = await h.processor({ repositories: [repo], routes: { normal: scripted([]) } });
      await expect(p.process('../etc', cause('x'))).rejects.toMatchObject({ code: 'unsafe_id' });
    });

    it('a runtime that deletes its worktree', async () => {
      const { caseId, taskId } = ids();
      const p = await h.processor({
        repositories: [repo],
        routes: {
          normal: {
            name: 'vandal',
            runtime: { kind: 'command', argv: ['sh', '-c', 'rm -rf "$PWD"'] },
            timeoutMs: 10_000,
          },
        },
      });
      await assign(caseId, taskId);
      expect(await p.process(caseId, cause(caseId))).toBe('blocked');
      const events = await h.events(caseId);
      expect(types(events)).toEqual([
        'WorktreePrepared',
        'AttemptStarted',
        'AttemptFinished',
        'BlockerRaised',
      ]);
      expect(ofType(events, 'AttemptFinished')[0]!.data.outcome).toBe('runtime_error');
      expect(ofType(events, 'BlockerRaised')[0]!.data.kind).toBe('worktree_lost');

      // the same worker goes on with another case
      const other = ids();
      const fix = await stepDir(h.root, `fix-${other.caseId}`, { 'app.txt': 'fixed\n' });
      const healthy = await h.processor({
        repositories: [repo],
        routes: { normal: scripted([{ copy: fix }]) },
      });
      await assign(other.caseId, other.taskId);
      expect(await healthy.process(other.caseId, cause(other.caseId))).toBe('pr_ready');
    });

    it('a route whose provider credential file is missing: a blocker, not a retry loop', async () => {
      const { caseId, taskId } = ids();
      const p = await h.processor({
        repositories: [repo],
        routes: {
          normal: {
            name: 'needs-key',
            runtime: { kind: 'command', argv: ['true'] },
            timeoutMs: 10_000,
            providerCredentialFiles: { OPENAI_API_KEY: join(h.root, 'no-such-key') },
          },
        },
      });
      await assign(caseId, taskId);
      expect(await p.process(caseId, cause(caseId))).toBe('blocked');
      const [blocker] = ofType(await h.events(caseId), 'BlockerRaised');
      expect(blocker!.data.kind).toBe('runtime_failed');
      expect(blocker!.data.detail).toContain('OPENAI_API_KEY');
    });

    it('a check that needs a missing fixture is a blocker, never an escalation', async () => {
      const { caseId, taskId } = ids();
      const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
      const p = await h.processor({
        repositories: [
          {
            ...repo,
            checks: [
              {
                name: 'e2e',
                kind: 'focused_test',
                command: ['sh', '-c', 'echo "Error: fixture file not found: users.json"; exit 1'],
                timeoutMs: 5_000,
              },
            ],
          },
        ],
        routes: { normal: scripted([{ copy: fix }]), escalation: scripted([], 'strong') },
      });
      await assign(caseId, taskId);
      expect(await p.process(caseId, cause(caseId))).toBe('blocked');
      const events = await h.events(caseId);
      expect(ofType(events, 'BlockerRaised')[0]!.data.kind).toBe('fixtures');
      expect(ofType(events, 'EscalationUsed')).toHaveLength(0);
      expect(ofType(events, 'AttemptStarted')).toHaveLength(1);
    });
  });

  it('counts a change the runtime committed itself', async () => {
    const { caseId, taskId } = ids();
    const p = await h.processor({
      repositories: [repo],
      routes: {
        normal: {
          name: 'committer',
          runtime: {
            kind: 'command',
            argv: [
              'sh',
              '-c',
              'echo fixed > app.txt && git add app.txt && git -c user.name=a -c user.email=a@b commit -qm self',
            ],
          },
          timeoutMs: 10_000,
        },
      },
    });
    await assign(caseId, taskId);
    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    const [finished] = ofType(await h.events(caseId), 'AttemptFinished');
    expect(finished!.data.outcome).toBe('changed');
    expect(finished!.data.diffSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('leaves the worktree exactly at the proven revision even when a check rewrites files', async () => {
    const { caseId, taskId } = ids();
    const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
    const p = await h.processor({
      repositories: [
        {
          ...repo,
          checks: [
            ...checks,
            {
              name: 'format',
              kind: 'format',
              command: ['sh', '-c', 'echo reformatted >> README.md; touch stray.tmp'],
              timeoutMs: 5_000,
            },
          ],
        },
      ],
      routes: { normal: scripted([{ copy: fix }]) },
    });
    await assign(caseId, taskId);
    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    const worktree = join(h.workDir, 'worktrees', caseId);
    const [completed] = ofType(await h.events(caseId), 'ChecksCompleted');
    expect(git(worktree, 'rev-parse', 'HEAD')).toBe(completed!.data.revision);
    expect(git(worktree, 'status', '--porcelain')).toBe('');
  });

  it('records the draft pull request opened for the pushed branch', async () => {
    const { caseId, taskId } = ids();
    const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
    const asked: { branch: string; title: string }[] = [];
    const draftPullRequests = {
      async openOrUpdate(_repo: TargetRepository, pr: { branch: string; title: string; body: string }) {
        asked.push({ branch: pr.branch, title: pr.title });
        return 'https://github.com/acme/shop/pull/7';
      },
    };
    const p = await h.processor({
      repositories: [repo],
      routes: { normal: scripted([{ copy: fix }]) },
      draftPullRequests,
    });
    await assign(caseId, taskId);
    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    expect(asked).toEqual([
      { branch: `caseloop/${caseId}`, title: `caseloop: Cart total is off by one (case ${caseId})` },
    ]);
    expect(ofType(await h.events(caseId), 'BranchPushed')[0]!.data.draftPullRequestUrl).toBe(
      'https://github.com/acme/shop/pull/7',
    );
  });

  it('removes the worktree of a case that ended, once, and keeps the pushed branch', async () => {
    const { caseId, taskId } = ids();
    const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
    const p = await h.processor({ repositories: [repo], routes: { normal: scripted([{ copy: fix }]) } });
    await assign(caseId, taskId);
    expect(await p.process(caseId, cause(caseId))).toBe('pr_ready');
    const worktree = join(h.workDir, 'worktrees', caseId);
    expect(existsSync(worktree)).toBe(true);
    await h.coordinator(caseId, [
      draft('CaseApproved', { reviewerId: '42', branch: `caseloop/${caseId}`, revision: null }),
    ]);
    expect(await p.process(caseId, cause(caseId))).toBe('ended');
    expect(await p.process(caseId, cause(caseId))).toBe('ended');
    const events = await h.events(caseId);
    expect(ofType(events, 'WorktreeRemoved').map((e) => e.data.reason)).toEqual(['approved']);
    expect(existsSync(worktree)).toBe(false);
    expect(remote.ref(`refs/heads/caseloop/${caseId}`)).toMatch(/^[0-9a-f]{40}$/);
  });
});
