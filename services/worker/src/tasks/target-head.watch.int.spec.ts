import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { CaseView, foldCase } from '@caseloop/case-model';
import { draft, RecordedEvent } from '@caseloop/contracts';
import { TargetRepository } from '@caseloop/target-repositories';
import { eventually } from '@caseloop/testing';
import { git, TestRemote } from '../worktrees/test-repository.fixture';
import { TargetHeadWatch } from './target-head.watch';
import { TaskProcessor, WatchOutcome } from './task.processor';
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
let counter = 0;
const silent = { info: () => undefined, warn: () => undefined };

beforeAll(async () => {
  h = await workerHarness();
});
afterAll(() => h?.cleanup());

/** A case carried to a pushed PR-ready branch on its own remote, then confirmed to every source: awaiting review. */
async function awaitingReview(): Promise<{
  caseId: string;
  taskId: string;
  remote: TestRemote;
  start: string;
  p: TaskProcessor;
}> {
  counter += 1;
  const suffix = `${counter}${Date.now().toString(36)}`;
  const caseId = `Cwatch${suffix}`;
  const taskId = `Twatch${suffix}`;
  const remote = new TestRemote(join(h.root, `remote-${caseId}`));
  const start = remote.commit({ 'app.txt': 'broken\n' }, 'initial');
  const repo: TargetRepository = {
    id: `repo-${caseId}`,
    url: remote.origin,
    targetBranch: 'main',
    checks: [
      {
        name: 'cart',
        kind: 'focused_test',
        command: ['sh', '-c', 'grep -q fixed app.txt'],
        timeoutMs: 10_000,
      },
    ],
  };
  const fix = await stepDir(h.root, `fix-${caseId}`, { 'app.txt': 'fixed\n' });
  const p = await h.processor({
    repositories: [repo],
    routes: {
      normal: { name: 'scripted', runtime: { kind: 'scripted', steps: [{ copy: fix }] }, timeoutMs: 20_000 },
    },
  });
  await h.coordinator(caseId, [
    caseOpened('Cart total is off by one'),
    taskAssigned({ taskId, repository: repo.id, targetRevision: start }),
  ]);
  expect(await p.process(caseId, { eventId: `cause-${caseId}`, correlationId: `corr-${caseId}` })).toBe(
    'pr_ready',
  );
  await h.coordinator(caseId, [
    draft('CaseAwaitingReview', { receiptId: `rcpt-${caseId}`, confirmedSources: ['discord-1'] }),
  ]);
  return { caseId, taskId, remote, start, p };
}

const workerEvents = (events: RecordedEvent[]) => events.filter((e) => e.producer === 'worker');

describe('the target head watch on a real ledger and real git', () => {
  it('reports a move of the target branch under a proof awaiting review once, which makes the proof stale and is re-proven', async () => {
    const { caseId, taskId, remote, start, p } = await awaitingReview();
    const watch = new TargetHeadWatch(p, 0, silent);
    const before = await h.events(caseId);
    const proof = ofType(before, 'ChecksCompleted')[0]!.data;
    expect(proof).toMatchObject({ targetHead: start, passed: true });

    // The head did not move: a look appends nothing.
    expect((await watch.tick())[caseId]).toBe('unchanged');
    // A remote out of reach is looked at again later: it raises no blocker on a proof under review.
    renameSync(remote.origin, `${remote.origin}.away`);
    expect((await watch.tick())[caseId]).toBe('unreachable');
    renameSync(`${remote.origin}.away`, remote.origin);
    expect(await h.events(caseId)).toHaveLength(before.length);

    const moved = remote.commit({ 'CHANGELOG.md': 'upstream work\n' }, 'upstream moves on');
    expect((await watch.tick())[caseId]).toBe('moved');
    const seen = await h.events(caseId);
    expect(seen.slice(before.length).map((e) => e.type)).toEqual(['TargetRevisionChecked']);
    const checked = ofType(seen, 'TargetRevisionChecked')[0]!;
    expect(checked.data).toMatchObject({ taskId, recorded: start, head: moved, outcome: 'moved' });
    const rebased = checked.data.rebasedRevision!;
    expect(git(join(h.workDir, 'worktrees', caseId), 'rev-parse', `${rebased}~1`)).toBe(moved);
    // Caused by the case awaiting review, in its correlation.
    const awaiting = ofType(seen, 'CaseAwaitingReview')[0]!;
    expect(checked).toMatchObject({ causationId: awaiting.eventId, correlationId: awaiting.correlationId });
    // What the coordinator reads: a head newer than the one the passing proof was made on, while awaiting review.
    const view = foldCase(seen) as CaseView;
    expect(view).toMatchObject({ status: 'awaiting_review', targetHead: moved, supersededHeads: [start] });
    expect(view.latestChecks).toMatchObject({ passed: true, targetHead: start });

    // Further looks report nothing more for the same head.
    expect((await watch.tick())[caseId]).toBe('not_watched');
    expect((await watch.tick())[caseId]).toBe('not_watched');
    expect(await h.events(caseId)).toHaveLength(seen.length);

    // The coordinator's answer to a move (as in its stale-proof rule), then the worker re-proves once, on the new head.
    await h.coordinator(caseId, [
      draft('ProofMarkedStale', { taskId, provenRevision: proof.revision, targetHead: moved }),
      draft('TaskResumed', { taskId, reason: 'stale_proof', note: null }),
    ]);
    expect(await p.process(caseId, { eventId: `resume-${caseId}`, correlationId: `corr-${caseId}` })).toBe(
      'pr_ready',
    );
    const reproven = await h.events(caseId);
    const completed = ofType(reproven, 'ChecksCompleted');
    expect(completed).toHaveLength(2);
    expect(completed[1]!.data).toMatchObject({ revision: rebased, targetHead: moved, passed: true });
    expect(remote.ref(`refs/heads/caseloop/${caseId}`)).toBe(rebased);

    // Awaiting review again on the new proof: watched again, quiet while the head stays.
    await h.coordinator(caseId, [
      draft('CaseAwaitingReview', { receiptId: `rcpt2-${caseId}`, confirmedSources: ['discord-1'] }),
    ]);
    expect((await watch.tick())[caseId]).toBe('unchanged');

    // A move the case branch cannot be rebased onto: reported once, with the conflict blocker, then quiet.
    const conflicting = remote.commit(
      { 'app.txt': 'rewritten upstream\n' },
      'upstream rewrites the same line',
    );
    const beforeConflict = (await h.events(caseId)).length;
    expect((await watch.tick())[caseId]).toBe('moved');
    expect((await watch.tick())[caseId]).toBe('not_watched');
    const after = (await h.events(caseId)).slice(beforeConflict);
    expect(after.map((e) => e.type)).toEqual(['TargetRevisionChecked', 'BlockerRaised']);
    expect(ofType(after, 'TargetRevisionChecked')[0]!.data).toMatchObject({
      recorded: moved,
      head: conflicting,
      outcome: 'conflict',
    });
    expect(ofType(after, 'BlockerRaised')[0]!.data.kind).toBe('conflict');
  });

  it('looks on its own every interval, also after a restart, and reports each new head once', async () => {
    const { caseId, remote, start } = await awaitingReview();
    // A restarted worker: a fresh processor finds the case by its worktree and its state in the ledger.
    const restarted = await h.processor({
      repositories: [
        {
          id: `repo-${caseId}`,
          url: remote.origin,
          targetBranch: 'main',
          checks: [{ name: 'cart', kind: 'focused_test', command: ['true'], timeoutMs: 10_000 }],
        },
      ],
      routes: { normal: { name: 'scripted', runtime: { kind: 'scripted', steps: [] }, timeoutMs: 20_000 } },
    });
    const looks: Record<string, WatchOutcome>[] = [];
    const watch = new TargetHeadWatch(
      {
        watchTargets: async () => {
          const outcome = await restarted.watchTargets();
          looks.push(outcome);
          return outcome;
        },
      },
      50,
      silent,
    );
    watch.start();
    try {
      await eventually(() => looks.some((l) => l[caseId] === 'unchanged'), { what: 'a quiet look' });
      const moved = remote.commit({ 'CHANGELOG.md': 'upstream work\n' }, 'upstream moves on');
      const checked = await eventually(
        async () => ofType(await h.events(caseId), 'TargetRevisionChecked')[0],
        { timeoutMs: 30_000, what: 'the move reported' },
      );
      expect(checked!.data).toMatchObject({ recorded: start, head: moved, outcome: 'moved' });
      const seen = looks.length;
      await eventually(() => looks.length >= seen + 3, { what: 'three more looks' });
    } finally {
      await watch.stop();
    }
    expect(ofType(await h.events(caseId), 'TargetRevisionChecked')).toHaveLength(1);
    expect(workerEvents(await h.events(caseId)).at(-1)?.type).toBe('TargetRevisionChecked');
  });
});
