import { LoopWorld, ofType, REPORTS, until } from './e2e/loop.fixture';

jest.setTimeout(600_000);

/** No browser on the machine: the truthful outcome is "implemented; client verification blocked", in every thread. */
describe('the loop without a browser', () => {
  let w: LoopWorld;

  beforeAll(async () => {
    w = await LoopWorld.start({ chromium: null });
  });
  afterAll(async () => {
    await w?.stop();
  });

  it('says "implemented; client verification blocked" in both threads, and the ledger agrees', async () => {
    const t0 = Date.now();
    const first = w.report('alice', REPORTS.cartTotal);
    await until('the acknowledgement', 120_000, () => w.botPosts(first.id)[0]);
    const { caseId } = await w.caseOf(first.id);
    const second = w.report('bob', REPORTS.cartTotalOtherWords);
    expect(await w.caseOf(second.id)).toEqual({ caseId, outcome: 'linked' });

    const receipts = await until('the receipt in both threads', 300_000, () => {
      const a = w.receipts(first.id);
      const b = w.receipts(second.id);
      return a.length && b.length ? [a[0], b[0]] : null;
    });
    const events = await w.events(caseId);
    const checks = ofType(events, 'ChecksCompleted').at(-1);
    expect(checks?.data.passed).toBe(true);
    const client = ofType(events, 'ClientValidationCompleted').at(-1);
    expect(client?.data).toMatchObject({
      outcome: 'blocked',
      revision: checks?.data.revision,
      captureIds: [],
    });
    expect(client?.data.reason).toBeTruthy();
    // Nothing was captured, so nothing claims to show the client.
    expect(ofType(events, 'CaptureTaken')).toHaveLength(0);
    expect(ofType(events, 'ArtifactStored').filter((a) => a.data.kind === 'screenshot')).toHaveLength(0);
    expect(ofType(events, 'GateEvaluated').at(-1)?.data).toMatchObject({
      outcome: 'implemented_client_blocked',
    });
    for (const r of receipts) {
      expect(r?.content).toContain('**Outcome:** implemented; client verification blocked');
      expect(r?.content).toContain(checks?.data.revision);
      expect(r?.content).not.toContain('**Outcome:** PR ready');
    }
    expect(await w.stack.remote.head()).toBe(checks?.data.targetHead);
    const audit = await w.audit(caseId);
    expect(audit.code).toBe(0);
    process.stdout.write(`scenario 3: report to client-blocked receipt in ${Date.now() - t0} ms\n`);
  });
});
