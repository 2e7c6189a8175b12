import { git } from '@caseloop/stack';
import { LoopWorld, ofType, REPORTS, until } from './e2e/loop.fixture';

jest.setTimeout(600_000);

/** A caseloop notice that the receipt shown in a thread went stale when the target moved to `head`. */
const isStaleNotice = (content: string, head: string): boolean =>
  content.includes(`moved to \`${head.slice(0, 12)}\``) &&
  content.includes('The receipt above is out of date');

/** A teammate merges into the target branch after the checks passed: the old proof no longer counts. */
describe('the target branch moves under a passing proof', () => {
  let w: LoopWorld;

  beforeAll(async () => {
    // The worker looks at the target of cases awaiting review every 2 s here (60 s by default).
    w = await LoopWorld.start({ env: { worker: { WORKER_TARGET_WATCH_INTERVAL_MS: '2000' } } });
  });
  afterAll(async () => {
    await w?.stop();
  });

  it('rejects the stale proof, re-runs on the new head, and the reporter gets a receipt naming the new revision; a receipt already shown is declared out of date in every thread and cannot be approved', async () => {
    const t0 = Date.now();
    const first = w.report('alice', REPORTS.cartTotal);
    await until('the acknowledgement', 120_000, () => w.botPosts(first.id)[0]);
    const { caseId } = await w.caseOf(first.id);
    const second = w.report('bob', REPORTS.cartTotalOtherWords);
    expect(await w.caseOf(second.id)).toEqual({ caseId, outcome: 'linked' });
    const threads = [first.id, second.id];

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
    let events = await w.events(caseId);
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
    // The first move told a thread only if a receipt had been routed to it before the proof went stale.
    for (const id of threads) {
      const shown = ofType(events, 'DeliveryRequested').some(
        (d) => d.data.kind === 'receipt' && d.data.place.messageId === id && d.seq < stale.seq,
      );
      const told = w.botPosts(id).filter((m) => isStaleNotice(m.content, newHead));
      expect([id, told.length]).toEqual([id, shown ? 1 : 0]);
    }

    // Now the receipt on `revision` is in both threads and the case awaits review: the target moves again.
    const shownReceipts = threads.map((id) => {
      const r = w.receipts(id).find((m) => m.content.includes(revision));
      expect(r).toBeDefined();
      return r!;
    });
    const thirdHead = await w.stack.remote.moveTarget('CHANGELOG.md', 'Unrelated: and another line.');
    const stale2 = await until('the shown proof marked stale', 240_000, async () =>
      ofType(await w.events(caseId), 'ProofMarkedStale').find((s) => s.data.targetHead === thirdHead),
    );
    expect(stale2.data.provenRevision).toBe(revision);
    // The worker pauses so the re-proof cannot outrun the approval below; it is back once that is refused.
    await w.stack.kill('worker', 'SIGTERM');
    // A reviewer still reading the old receipt approves it.
    w.reply(first.id, 'rita', 'approve');
    for (const [i, id] of threads.entries()) {
      const notice = await until(`the stale notice in thread ${id}`, 120_000, () =>
        w.botPosts(id).find((m) => isStaleNotice(m.content, thirdHead)),
      );
      expect(notice.content).toContain(`The target branch \`${w.stack.remote.branch}\` moved to`);
      expect(notice.content).toContain(`proven on \`${revision.slice(0, 12)}\``);
      expect(notice.content).toContain(caseId);
      expect(notice.content).not.toContain('caseloop receipt');
      // It follows the receipt it makes out of date.
      const posts = w.botPosts(id).map((m) => m.id);
      expect(posts.indexOf(notice.id)).toBeGreaterThan(posts.indexOf(shownReceipts[i]!.id));
    }
    const refusal = await until('the approval refused', 120_000, () =>
      w.botPosts(first.id).find((m) => m.content.includes(`Case ${caseId} cannot be approved`)),
    );
    expect(refusal.content).toContain('cannot be approved yet: it is in progress');
    await w.stack.restart('worker');

    const thirdRun = await until('checks passed on the third head', 240_000, async () =>
      ofType(await w.events(caseId), 'ChecksCompleted').find(
        (c) => c.data.passed && c.data.targetHead === thirdHead,
      ),
    );
    for (const id of threads) {
      await until(`the re-proven receipt in thread ${id}`, 240_000, () =>
        w.receipts(id).find((m) => m.content.includes(thirdRun.data.revision)),
      );
    }
    await until(
      'awaiting review on the re-proven receipt',
      120_000,
      async () =>
        (await w.view(caseId)).status === 'awaiting_review' &&
        (ofType(await w.events(caseId), 'CaseAwaitingReview').at(-1)?.seq ?? 0) > stale2.seq,
    );
    events = await w.events(caseId);
    expect(ofType(events, 'CaseApproved')).toEqual([]);
    expect(ofType(events, 'TaskAssigned')).toHaveLength(1);
    // Exactly one notice per thread for the shown proof, even after the re-proof.
    for (const id of threads) {
      expect([id, w.botPosts(id).filter((m) => isStaleNotice(m.content, thirdHead)).length]).toEqual([id, 1]);
    }

    const audit = await w.audit(caseId);
    expect(audit.code).toBe(0);
    process.stdout.write(`scenario 2: report to a re-proven receipt, twice, in ${Date.now() - t0} ms\n`);
  });
});
