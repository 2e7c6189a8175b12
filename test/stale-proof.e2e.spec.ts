import { git } from '@caseloop/stack';
import { LoopWorld, ofType, REPORTS, until } from './e2e/loop.fixture';

jest.setTimeout(600_000);

/** A teammate merges into the target branch after the checks passed: the old proof no longer counts. */
describe('the target branch moves under a passing proof', () => {
  let w: LoopWorld;

  beforeAll(async () => {
    w = await LoopWorld.start();
  });
  afterAll(async () => {
    await w?.stop();
  });

  it('rejects the stale proof, re-runs on the new head, and the reporter gets a receipt naming the new revision', async () => {
    const t0 = Date.now();
    const first = w.report('alice', REPORTS.cartTotal);
    await until('the acknowledgement', 120_000, () => w.botPosts(first.id)[0]);
    const { caseId } = await w.caseOf(first.id);

    const firstRun = await until('checks passed', 240_000, async () =>
      ofType(await w.events(caseId), 'ChecksCompleted').find((c) => c.data.passed),
    );
    const oldHead = firstRun.data.targetHead;
    expect(await w.stack.remote.head()).toBe(oldHead);
    const newHead = await w.stack.remote.moveTarget('CHANGELOG.md', 'Unrelated: the changelog gains a line.');

    const stale = await until(
      'the stale proof marked',
      240_000,
      async () => ofType(await w.events(caseId), 'ProofMarkedStale')[0],
    );
    expect(stale.data).toMatchObject({ provenRevision: firstRun.data.revision, targetHead: newHead });
    const rerun = await until('checks passed on the new head', 240_000, async () =>
      ofType(await w.events(caseId), 'ChecksCompleted').find(
        (c) => c.data.passed && c.data.targetHead === newHead,
      ),
    );
    const revision = rerun.data.revision;
    expect(revision).not.toBe(firstRun.data.revision);
    expect(rerun.seq).toBeGreaterThan(stale.seq);
    const receipt = await until('a receipt naming the new revision', 240_000, () =>
      w.receipts(first.id).find((m) => m.content.includes(revision)),
    );
    expect(receipt.content).toContain('**Outcome:** PR ready');
    await until(
      'awaiting review on the new proof',
      120_000,
      async () => (await w.view(caseId)).status === 'awaiting_review',
    );
    const events = await w.events(caseId);
    const awaiting = ofType(events, 'CaseAwaitingReview').at(-1);
    expect(awaiting?.seq).toBeGreaterThan(stale.seq);
    // Whatever the gate said before the move was seen, its last word is on the new revision, complete.
    expect(ofType(events, 'GateEvaluated').at(-1)?.data).toMatchObject({
      revision,
      targetHead: newHead,
      complete: true,
    });
    expect(ofType(events, 'TaskAssigned')).toHaveLength(1);
    expect(await w.stack.remote.head(`caseloop/${caseId}`)).toBe(revision);
    expect(await w.stack.remote.head()).toBe(newHead);
    // The pushed case branch sits on the new head.
    await expect(git(w.stack.remote.path, ['merge-base', '--is-ancestor', newHead, revision])).resolves.toBe(
      '',
    );

    const audit = await w.audit(caseId);
    expect(audit.code).toBe(0);
    process.stdout.write(`scenario 2: report to a re-proven receipt in ${Date.now() - t0} ms\n`);
  });
});
