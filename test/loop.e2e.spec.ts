import { createHash } from 'node:crypto';
import { git } from '@caseloop/stack';
import { LoopWorld, ofType, REPORTS, until } from './e2e/loop.fixture';

jest.setTimeout(600_000);

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * The whole loop: six services as processes, the local Discord, local S3, Chromium and the example
 * repository. Every step is checked where the reporter sees it (Discord) and where it is recorded (the ledger).
 */
describe('the loop, end to end', () => {
  let w: LoopWorld;
  let failed = false;

  beforeAll(async () => {
    w = await LoopWorld.start();
  });
  afterEach(() => {
    const state = expect.getState();
    if (state.assertionCalls > 0 && state.numPassingAsserts < state.assertionCalls) failed = true;
  });
  afterAll(async () => {
    if (failed && w) process.stdout.write(w.logTail());
    await w?.stop();
  });

  it('report → 👀 → case in a thread → a second reporter linked → checks, browser, evidence → receipt in both threads → approved; branch pushed, nothing merged', async () => {
    const t0 = Date.now();
    const mainBefore = await w.stack.remote.head();

    const first = w.report('alice', REPORTS.cartTotal);
    await until('👀 on the report', 60_000, () => w.reactions(first.id).includes('👀'));
    const ack = await until('the acknowledgement in a thread', 120_000, () => w.botPosts(first.id)[0]);
    const { caseId, outcome } = await w.caseOf(first.id);
    expect(outcome).toBe('opened');
    expect(ack.content).toContain(caseId);

    const second = w.report('bob', REPORTS.cartTotalOtherWords);
    const linked = await w.caseOf(second.id);
    expect(linked).toEqual({ caseId, outcome: 'linked' });
    const told = await until(
      "bob is told his report joined alice's case",
      120_000,
      () => w.botPosts(second.id)[0],
    );
    expect(told.content).toContain(caseId);

    // Both threads get the receipt: it names the revision the checks and the browser ran on.
    const [receiptA, receiptB] = await until('the receipt in both threads', 300_000, () => {
      const a = w.receipts(first.id);
      const b = w.receipts(second.id);
      return a.length && b.length ? [a[0], b[0]] : null;
    });
    const events = await w.events(caseId);
    expect(ofType(events, 'TaskAssigned')).toHaveLength(1);
    const checks = ofType(events, 'ChecksCompleted').at(-1);
    expect(checks?.data).toMatchObject({ passed: true, targetHead: mainBefore });
    expect(checks?.data.results.map((r) => [r.name, r.outcome, r.revision])).toEqual(
      ['format', 'lint', 'focused', 'regression', 'build'].map((n) => [n, 'passed', checks?.data.revision]),
    );
    const revision = checks?.data.revision as string;
    for (const r of [receiptA, receiptB]) {
      expect(r?.content).toContain('**Outcome:** PR ready');
      expect(r?.content).toContain(revision);
      expect(r?.content).toContain('total-counts-every-unit');
    }

    // The browser captured the fixed behaviour under its lease; the screenshot was stored and reads back intact.
    expect(ofType(events, 'ClientValidationCompleted').at(-1)?.data).toMatchObject({
      outcome: 'passed',
      revision,
    });
    const capture = ofType(events, 'CaptureTaken').at(-1);
    expect(capture?.data.step).toBe('total-counts-every-unit');
    const shot = ofType(events, 'ArtifactStored').find((a) => a.data.kind === 'screenshot');
    expect(shot?.data).toMatchObject({ revision, captureId: capture?.data.captureId });
    const link = `${w.stack.urls.services.evidence}/evidence/cases/${caseId}/${revision}/${shot?.data.sha256}`;
    expect(receiptA?.content).toContain(link);
    const res = await fetch(link);
    expect(res.status).toBe(200);
    const png = Buffer.from(await res.arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(sha256(png)).toBe(shot?.data.sha256);

    // Receipts confirmed in both threads: the case waits for a human.
    await until('awaiting review', 120_000, async () => (await w.view(caseId)).status === 'awaiting_review');
    w.reply(first.id, 'rita', 'approve');
    await until('approved', 120_000, async () => (await w.view(caseId)).status === 'approved');
    await until('the approval answered in the thread', 60_000, () =>
      w.botPosts(first.id).find((m) => m.content.includes('was approved')),
    );

    // The PR-ready branch is in the remote with the fix; main is untouched.
    const branch = `caseloop/${caseId}`;
    expect(ofType(await w.events(caseId), 'CaseApproved')[0]?.data.branch).toBe(branch);
    expect(await w.stack.remote.branches()).toContain(branch);
    expect(await w.stack.remote.head(branch)).toBe(revision);
    expect(await w.stack.remote.head()).toBe(mainBefore);
    expect(
      await git(w.stack.remote.path, ['diff', '--stat', mainBefore, revision, '--', 'src/cart.js']),
    ).toMatch(/cart\.js/);

    // Exactly one receipt per thread, no duplicate post, and the projection equals the fold of the stream.
    expect(w.receipts(first.id)).toHaveLength(1);
    expect(w.receipts(second.id)).toHaveLength(1);
    const audit = await w.audit(caseId);
    expect(audit.out).toContain('clean: the projection equals the fold of the stream');
    expect(audit.code).toBe(0);
    process.stdout.write(`scenario 1: report to approval in ${Date.now() - t0} ms\n`);
  });

  it('product feedback stays a product case until a reviewer makes it actionable', async () => {
    const t0 = Date.now();
    const idea = w.report('alice', REPORTS.feedback, 'feedback');
    const ack = await until('the acknowledgement', 120_000, () => w.botPosts(idea.id)[0]);
    const { caseId, outcome } = await w.caseOf(idea.id);
    expect(outcome).toBe('opened');
    expect(ack.content).toContain(caseId);
    expect(ack.content).toMatch(/feedback/i);

    // The acknowledgement is confirmed and nothing was dispatched.
    await until(
      'ack confirmed',
      60_000,
      async () => ofType(await w.events(caseId), 'DeliveryConfirmed').length > 0,
    );
    let view = await w.view(caseId);
    expect(view).toMatchObject({ status: 'feedback', classification: 'feedback', taskId: null });
    expect(ofType(await w.events(caseId), 'TaskAssigned')).toHaveLength(0);

    // A reporter cannot promote it; the reviewer can.
    w.reply(idea.id, 'bob', 'actionable');
    w.reply(idea.id, 'rita', 'actionable: ship it behind a flag');
    const assigned = await until(
      'a task after the reviewer',
      120_000,
      async () => ofType(await w.events(caseId), 'TaskAssigned')[0],
    );
    const events = await w.events(caseId);
    const promoted = ofType(events, 'CaseMadeActionable');
    expect(promoted).toHaveLength(1);
    expect(promoted[0]?.data).toMatchObject({ reviewerId: w.ids.rita });
    expect(promoted[0]?.seq).toBeLessThan(assigned.seq);
    view = await w.view(caseId);
    expect(view.taskId).toBe(assigned.data.taskId);
    const audit = await w.audit(caseId);
    expect(audit.code).toBe(0);
    process.stdout.write(`scenario 4: feedback to task in ${Date.now() - t0} ms\n`);
  });
});
