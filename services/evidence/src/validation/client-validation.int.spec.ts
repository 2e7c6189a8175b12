import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { draft, RecordedEvent, ulidFrom } from '@caseloop/contracts';
import { LeaseClient } from '@caseloop/lease-client';
import type { TargetRepository } from '@caseloop/target-repositories';
import { eventually } from '@caseloop/testing';
import { LeaseHarness, startLeaseHarness } from '../../../lease/src/leases/testing/lease.harness';
import { ChromiumBrowser, DEFAULT_CHROMIUM_ARGS } from '../browser/chromium.browser';
import { ClientPhaseSettings, ClientValidationRunner } from '../browser/client-validation.runner';
import { LeaseClientAdapter } from '../browser/lease-client.adapter';
import { HeldLease, LeasePort } from '../browser/lease.port';
import { sha256Of } from '../storage/s3-artifact.store';
import {
  caseWorktree,
  checksCompleted,
  EvidenceHarness,
  evidenceHarness,
  taskAssigned,
} from './evidence.test-fixture';
import { EvidenceHandler } from './evidence.handler';

jest.setTimeout(180_000);

const FIXTURES = join(__dirname, '..', 'browser', 'fixtures');
const RESOURCE = 'browser:default';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const ofType = <T extends RecordedEvent['type']>(events: RecordedEvent[], type: T) =>
  events.filter((e): e is Extract<RecordedEvent, { type: T }> => e.type === type);
const one = <T extends RecordedEvent['type']>(events: RecordedEvent[], type: T) => {
  const found = ofType(events, type);
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  return found[0] as Extract<RecordedEvent, { type: T }>;
};

const repository = (id: string, flow: string, fixtureData = true): TargetRepository => ({
  id,
  url: 'https://git.example.com/counter.git',
  targetBranch: 'main',
  checks: [{ name: 'focused', kind: 'focused_test', command: ['true'], timeoutMs: 1000 }],
  client: {
    start: ['node', 'server.js'],
    url: 'http://127.0.0.1:4300',
    readyPath: '/healthz',
    flow: join(FIXTURES, flow),
    fixtureData,
  },
});

const SETTINGS: ClientPhaseSettings = {
  leaseTtlMs: 60_000,
  leaseWaitMs: 120_000,
  renewWithinMs: 30_000,
  readyTimeoutMs: 30_000,
  stepTimeoutMs: 10_000,
  flowTimeoutMs: 120_000,
  viewport: { width: 800, height: 600 },
  trace: false,
};

describe('client validation in a real Chromium under the browser lease', () => {
  let leases: LeaseHarness;
  /** The lease service now running: the harness's, then a restarted one's. */
  let leaseService: { close(): Promise<void> };
  let h: EvidenceHarness;
  let serverJs: string;
  let n = 0;

  beforeAll(async () => {
    leases = await startLeaseHarness({ skewMs: 200, sweepIntervalMs: 50 });
    leaseService = leases.service;
    // Evidence and lease events land on the same case aggregates, as in the running system.
    h = await evidenceHarness(leases.reader);
    serverJs = await readFile(join(FIXTURES, 'counter-app', 'server.js'), 'utf8');
  });
  afterAll(async () => {
    await h?.cleanup();
    await leases?.cleanup();
  });

  const handler = (
    repos: TargetRepository[],
    over: Partial<ClientPhaseSettings> = {},
    executablePath = '/usr/bin/chromium',
    leasePort: LeasePort = new LeaseClientAdapter(async () => leases.client),
  ) =>
    new EvidenceHandler({
      store: h.ledger.store,
      artifacts: h.artifacts,
      runner: new ClientValidationRunner(
        new ChromiumBrowser({ executablePath, args: DEFAULT_CHROMIUM_ARGS, launchTimeoutMs: 60_000 }),
        leasePort,
        { ...SETTINGS, ...over },
        { now: Date.now, newCaptureId: () => `cap-${ulidFrom(Date.now(), randomBytes(10))}` },
      ),
      ...h.deps,
      // Every repository's remote is the harness's, where the cases' branches are pushed.
      repository: (id) => repos.map((r) => ({ ...r, url: h.remote })).find((r) => r.id === id),
      resource: RESOURCE,
      linkBase: null,
      now: () => new Date(),
    });

  /** A case whose task passed its checks on a revision of the counter app; resolves with its trigger. */
  async function passingCase(repoId: string) {
    n++;
    const caseId = `C01JCLIENT${String(n).padStart(2, '0')}${randomBytes(6).toString('hex').toUpperCase()}`;
    const wt = await caseWorktree(
      h.worktreesDir,
      caseId,
      { 'server.js': serverJs },
      { 'CHANGES.md': `change ${n}\n` },
    );
    await h.append(caseId, 'coordinator', `assign-${caseId}`, [taskAssigned(`T${n}`, repoId)]);
    const [checks] = await h.append(caseId, 'worker', `checks-${caseId}`, [
      checksCompleted(`T${n}`, wt.revision, wt.base, [{ name: 'focused', sha256: null }]),
    ]);
    return { caseId, wt, checks: checks as RecordedEvent };
  }

  it('serializes two tasks on the browser: one waits, is granted after the release, and each capture carries its own token', async () => {
    const holder = repository('gated', 'gated.flow.js');
    const waiter = repository('counter', 'counter.flow.yaml', false);
    const wf = handler([holder, waiter]);
    const a = await passingCase('gated');
    const b = await passingCase('counter');

    // The app runs from the evidence service's checkout of the revision: the gate is opened there.
    const openGate = () =>
      writeFile(join(h.deps.code.checkoutPath(a.caseId, a.wt.revision), 'gate.open'), '');
    const first = wf.onChecksCompleted(a.checks);
    let second: Promise<unknown> = Promise.resolve();
    let queued: Extract<RecordedEvent, { type: 'LeaseRequested' }> | undefined;
    try {
      await eventually(async () => ofType(await h.events(a.caseId), 'LeaseGranted')[0], {
        timeoutMs: 60_000,
        what: 'task A holds the browser',
      });
      second = wf.onChecksCompleted(b.checks);
      queued = await eventually(async () => ofType(await h.events(b.caseId), 'LeaseRequested')[0], {
        timeoutMs: 60_000,
        what: 'task B is in line for the browser',
      });
      // A still holds it (its flow waits at the gate), so B is first in line and not granted.
      expect(queued?.data.position).toBe(0);
      expect(ofType(await h.events(b.caseId), 'LeaseGranted')).toHaveLength(0);
    } finally {
      await openGate();
      await Promise.all([first, second]);
    }

    const evA = await h.events(a.caseId);
    const evB = await h.events(b.caseId);
    const grantA = one(evA, 'LeaseGranted');
    const grantB = one(evB, 'LeaseGranted');
    const releaseA = one(evA, 'LeaseReleased');
    const releaseB = one(evB, 'LeaseReleased');
    expect(grantB.data.token).not.toBe(grantA.data.token);
    // Stream order across both cases: B asked, A released, then B was granted.
    expect(queued?.seq).toBeLessThan(releaseA.seq);
    expect(grantB.seq).toBeGreaterThan(releaseA.seq);

    for (const [events, grant, release, steps] of [
      [evA, grantA, releaseA, ['holding-the-browser', 'total-is-one']],
      [evB, grantB, releaseB, ['two-added', 'total-is-three']],
    ] as const) {
      expect(one(events, 'ClientValidationCompleted').data).toMatchObject({
        outcome: 'passed',
        reason: null,
      });
      const captures = ofType(events, 'CaptureTaken');
      expect(captures.map((c) => c.data.step)).toEqual(steps);
      for (const c of captures) {
        expect(c.data).toMatchObject({
          leaseToken: grant.data.token,
          resource: RESOURCE,
          revision: grant.data.revision,
        });
        // The screenshot is in S3, read back, and is the PNG the capture event names.
        const stored = ofType(events, 'ArtifactStored').find((s) => s.data.captureId === c.data.captureId);
        if (!stored) throw new Error(`capture ${c.data.captureId} not stored`);
        expect(stored.data).toMatchObject({
          sha256: c.data.sha256,
          leaseToken: grant.data.token,
          kind: 'screenshot',
        });
        const png = await h.artifacts.read(stored.data.key);
        expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
        expect(sha256Of(png)).toBe(c.data.sha256);
      }
      expect(release.data.token).toBe(grant.data.token);
      expect([...release.data.captureIds].sort()).toEqual(captures.map((c) => c.data.captureId).sort());
    }

    // A declared fixture data: its screenshots are cleared. B did not: they wait for a human.
    const decisions = (events: RecordedEvent[]) =>
      ofType(events, 'ArtifactReviewed')
        .filter((r) => r.data.kind === 'screenshot')
        .map((r) => r.data.decision);
    expect(decisions(evA)).toEqual(['cleared', 'cleared']);
    expect(decisions(evB)).toEqual(['needs_human', 'needs_human']);
    expect(one(evA, 'ReceiptBuilt').data.outcome).toBe('pr_ready');
    const receiptB = one(evB, 'ReceiptBuilt').data;
    expect(receiptB.evidence.filter((e) => e.kind === 'screenshot').every((e) => !e.shareable)).toBe(true);
    expect(receiptB.rendered).toContain('awaiting privacy approval');

    // A reviewer approves one of B's screenshots in the thread: the receipt is built again with it shareable.
    const approvedSha = ofType(evB, 'CaptureTaken')[0]?.data.sha256 as string;
    const [approval] = await h.append(b.caseId, 'intake', `approve-${b.caseId}`, [
      draft('PrivacyApproved', { reviewerId: '1001', messageId: '2002', artifactSha256: approvedSha }),
    ]);
    expect(await wf.onPrivacyApproved(approval as RecordedEvent)).toMatchObject({ status: 'receipt_built' });
    expect(await wf.onPrivacyApproved(approval as RecordedEvent)).toMatchObject({ status: 'ignored' });
    const receipts = ofType(await h.events(b.caseId), 'ReceiptBuilt');
    expect(receipts).toHaveLength(2);
    const shots = receipts[1]?.data.evidence.filter((e) => e.kind === 'screenshot') ?? [];
    expect(shots.map((e) => [e.sha256 === approvedSha, e.shareable]).sort()).toEqual([
      [false, false],
      [true, true],
    ]);
  });

  it('voids the capture due after the lease expired mid-flow and fails the phase honestly', async () => {
    // Renewed before every step; one step (a 9 s wait) outlasts the 4 s grant.
    const wf = handler([repository('slow', 'slow.flow.js')], { leaseTtlMs: 4_000, renewWithinMs: 3_900 });
    const c = await passingCase('slow');
    await wf.onChecksCompleted(c.checks);
    const events = await h.events(c.caseId);

    const taken = ofType(events, 'CaptureTaken');
    expect(taken.map((e) => e.data.step)).toEqual(['before-slow']);
    const voided = one(events, 'CaptureVoided');
    expect(voided.data.reason).toBe('lease_expired');
    expect(voided.data.captureId).not.toBe(taken[0]?.data.captureId);
    const completed = one(events, 'ClientValidationCompleted').data;
    expect(completed.outcome).toBe('failed');
    expect(completed.reason).toMatch(/lease did not hold/);
    expect(completed.captureIds).toEqual([taken[0]?.data.captureId]);
    expect(ofType(events, 'ArtifactStored').some((s) => s.data.captureId === voided.data.captureId)).toBe(
      false,
    );
    const receipt = one(events, 'ReceiptBuilt').data;
    expect(receipt.outcome).toBe('blocked');
    expect(receipt.residualRisk).toContain('1 capture(s) void (lease expired)');
  });

  it('refuses a capture of the wrong page', async () => {
    const c = await passingCase('wrong-page');
    await handler([repository('wrong-page', 'wrong-page.flow.js')]).onChecksCompleted(c.checks);
    const events = await h.events(c.caseId);
    expect(ofType(events, 'CaptureTaken')).toHaveLength(0);
    expect(one(events, 'CaptureVoided').data.reason).toBe('wrong_page');
    const completed = one(events, 'ClientValidationCompleted').data;
    expect(completed.outcome).toBe('failed');
    expect(completed.reason).toBe('capture counter-total refused: the title is "Other", not "Counter"');
  });

  it('turns a failed assertion into a failed client claim with its screenshot', async () => {
    const c = await passingCase('failing');
    await handler([repository('failing', 'failing.flow.js')], { trace: true }).onChecksCompleted(c.checks);
    const events = await h.events(c.caseId);
    const completed = one(events, 'ClientValidationCompleted').data;
    expect(completed.outcome).toBe('failed');
    expect(completed.reason).toBe('assertion failed: #total: expected "2", found "1"');
    const shot = one(events, 'CaptureTaken');
    expect(shot.data.step).toBe('assertion-failed');
    expect(completed.captureIds).toEqual([shot.data.captureId]);
    const stored = ofType(events, 'ArtifactStored').find((s) => s.data.captureId === shot.data.captureId);
    if (!stored) throw new Error('the failure screenshot was not stored');
    expect(sha256Of(await h.artifacts.read(stored.data.key))).toBe(shot.data.sha256);
    const receipt = one(events, 'ReceiptBuilt').data;
    expect(receipt.outcome).toBe('blocked');
    expect(receipt.client).toEqual({
      flow: 'fixtures/failing.flow.js',
      outcome: 'failed',
      captureIds: [shot.data.captureId],
    });
    // With traces on, the flow's Playwright trace is stored too: a zip, read back and verified.
    const trace = ofType(events, 'ArtifactStored').find((s) => s.data.kind === 'trace');
    if (!trace) throw new Error('no trace stored');
    expect((await h.artifacts.read(trace.data.key)).subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
    expect(receipt.evidence.map((e) => e.kind)).toEqual(expect.arrayContaining(['screenshot', 'trace']));
  });

  it("drives the example shop cart's own flow: the bug fails the client claim, the fix passes it", async () => {
    const example = join(__dirname, '..', '..', '..', '..', 'examples');
    const files: Record<string, string> = {};
    for (const f of [
      'package.json',
      'src/server.js',
      'src/cart.js',
      'public/index.html',
      'public/app.js',
      'public/style.css',
    ]) {
      files[f] = await readFile(join(example, 'shop-cart', f), 'utf8');
    }
    const shop: TargetRepository = {
      ...repository('shop-cart', 'counter.flow.js'),
      client: {
        start: ['node', 'src/server.js'],
        url: 'http://127.0.0.1:4300',
        readyPath: '/healthz',
        flow: join(example, 'shop-cart', 'caseloop', 'flow.js'),
        fixtureData: true,
      },
    };
    const runShop = async (change: Record<string, string>) => {
      n++;
      const caseId = `C01JSHOP${String(n).padStart(2, '0')}${randomBytes(6).toString('hex').toUpperCase()}`;
      const wt = await caseWorktree(h.worktreesDir, caseId, files, change);
      await h.append(caseId, 'coordinator', `assign-${caseId}`, [taskAssigned(`T${n}`, 'shop-cart')]);
      const [checks] = await h.append(caseId, 'worker', `checks-${caseId}`, [
        checksCompleted(`T${n}`, wt.revision, wt.base, [{ name: 'focused', sha256: null }]),
      ]);
      await handler([shop]).onChecksCompleted(checks as RecordedEvent);
      return h.events(caseId);
    };

    const buggy = await runShop({ 'README.md': 'no fix\n' });
    expect(one(buggy, 'ClientValidationCompleted').data).toMatchObject({
      outcome: 'failed',
      reason: 'assertion failed: #total: expected "€12.90", found "€9.40"',
    });
    const fixed = await runShop({
      'src/cart.js': await readFile(join(example, 'shop-cart-fix', 'src', 'cart.js'), 'utf8'),
    });
    expect(one(fixed, 'ClientValidationCompleted').data.outcome).toBe('passed');
    expect(one(fixed, 'CaptureTaken').data).toMatchObject({
      step: 'total-counts-every-unit',
      page: { title: 'Cart' },
    });
    expect(one(fixed, 'ReceiptBuilt').data).toMatchObject({
      outcome: 'pr_ready',
      client: { flow: 'caseloop/flow.js', outcome: 'passed' },
    });
  });

  it('says "implemented; client verification blocked" when there is no browser', async () => {
    const c = await passingCase('nobrowser');
    await handler(
      [repository('nobrowser', 'counter.flow.js')],
      {},
      '/nonexistent/chromium',
    ).onChecksCompleted(c.checks);
    const events = await h.events(c.caseId);
    expect(one(events, 'ClientValidationCompleted').data).toMatchObject({
      outcome: 'blocked',
      reason: 'no executable browser at /nonexistent/chromium',
      captureIds: [],
    });
    // Nothing was started and the browser was never asked for.
    expect(ofType(events, 'LeaseRequested')).toHaveLength(0);
    const receipt = one(events, 'ReceiptBuilt').data;
    expect(receipt.outcome).toBe('implemented_client_blocked');
    expect(receipt.rendered).toContain('**Outcome:** implemented; client verification blocked');
    expect(receipt.residualRisk).toContain(
      'Client verification blocked: no executable browser at /nonexistent/chromium.',
    );
  });

  /**
   * The lease port of the running service, except that the first renewal of any grant first runs
   * `outage` (which stops the lease service): the flow meets the restart at exactly that call.
   */
  async function outageAtFirstRenewal(outage: (lease: HeldLease) => Promise<void>): Promise<LeasePort> {
    // Calls give up after 1 s without a lease service (15 s by default), so a short outage outlasts them.
    const client = await LeaseClient.connect(leases.clientNc, {
      namespace: leases.namespace,
      bucket: leases.bucket,
      retryMs: 1_000,
    });
    const port = new LeaseClientAdapter(async () => client, { now: Date.now, retryPauseMs: 100 });
    let struck = false;
    return {
      async acquire(request) {
        const lease = await port.acquire(request);
        return new Proxy(lease, {
          get(target, prop) {
            if (prop === 'renew' && !struck)
              return async () => {
                struck = true;
                await outage(target);
                return target.renew();
              };
            const v = Reflect.get(target, prop, target) as unknown;
            return typeof v === 'function' ? (v as () => unknown).bind(target) : v;
          },
        });
      },
    };
  }

  /** Stops the lease service now; `back` settles once another one runs, started when `until()` holds. */
  async function restartLeaseService(
    until: (downSince: number) => boolean,
  ): Promise<{ back: Promise<void> }> {
    await leaseService.close();
    const downSince = Date.now();
    const back = (async () => {
      while (!until(downSince)) await new Promise((r) => setTimeout(r, 50));
      leaseService = await leases.replica();
    })();
    return { back };
  }

  it('rides out a lease service restart during the flow: renewals are retried while the grant lasts, the flow passes under one grant', async () => {
    let restarted: Promise<void> | null = null;
    const port = await outageAtFirstRenewal(async () => {
      restarted = (await restartLeaseService((downSince) => Date.now() >= downSince + 4_000)).back;
    });
    // Every step renews (less than the whole TTL is always left).
    const wf = handler(
      [repository('counter-outage', 'counter.flow.js')],
      { renewWithinMs: SETTINGS.leaseTtlMs },
      undefined,
      port,
    );
    const c = await passingCase('counter-outage');
    await wf.onChecksCompleted(c.checks);
    // the outage did happen, at the flow's first renewal
    expect(restarted).not.toBeNull();
    await restarted;
    const events = await h.events(c.caseId);

    expect(one(events, 'ClientValidationCompleted').data).toMatchObject({ outcome: 'passed', reason: null });
    const grant = one(events, 'LeaseGranted');
    const captures = ofType(events, 'CaptureTaken');
    expect(captures.map((e) => e.data.step)).toEqual(['two-added', 'total-is-three']);
    for (const e of captures) expect(e.data.leaseToken).toBe(grant.data.token);
    expect(ofType(events, 'CaptureVoided')).toHaveLength(0);
    expect(one(events, 'ReceiptBuilt').data.outcome).toBe('pr_ready');
  });

  it('runs the flow once more under a new grant when the grant was lost while the lease service was down', async () => {
    let restarted: Promise<void> | null = null;
    const port = await outageAtFirstRenewal(async (lease) => {
      // down until the grant has lapsed (and past the skew margin): the grant is truly lost
      restarted = (await restartLeaseService(() => Date.now() > lease.expiresAt() + 500)).back;
    });
    const wf = handler(
      [repository('counter-lost', 'counter.flow.js')],
      { leaseTtlMs: 5_000, renewWithinMs: 5_000 },
      undefined,
      port,
    );
    const c = await passingCase('counter-lost');
    await wf.onChecksCompleted(c.checks);
    // the outage did happen, at the flow's first renewal
    expect(restarted).not.toBeNull();
    await restarted;
    const events = await h.events(c.caseId);

    const grants = ofType(events, 'LeaseGranted');
    expect(grants).toHaveLength(2);
    const [lost, second] = grants.map((g) => g.data.token);
    expect(second).toBeGreaterThan(lost as number);
    expect(one(events, 'ClientValidationCompleted').data).toMatchObject({ outcome: 'passed', reason: null });
    const captures = ofType(events, 'CaptureTaken');
    expect(captures.map((e) => e.data.step)).toEqual(['two-added', 'total-is-three']);
    for (const e of captures) expect(e.data.leaseToken).toBe(second);
    expect(one(events, 'ReceiptBuilt').data.outcome).toBe('pr_ready');
  });
});
