import { execFileSync } from 'node:child_process';
import { checkOutputArtifactPath, draft, RecordedEvent } from '@caseloop/contracts';
import type { TargetRepository } from '@caseloop/target-repositories';
import { ChromiumBrowser, DEFAULT_CHROMIUM_ARGS } from '../browser/chromium.browser';
import { ClientValidationRunner } from '../browser/client-validation.runner';
import { LeasePort, LeaseUnavailableError } from '../browser/lease.port';
import {
  caseWorktree,
  checkOutput,
  checksCompleted,
  EvidenceHarness,
  evidenceHarness,
  taskAssigned,
} from './evidence.test-fixture';
import { EvidenceHandler } from './evidence.handler';

jest.setTimeout(120_000);

const SECRET = 'ghp_R4nd0mL00k1ngT0k3nV4lu3Xy7Qz9Wm2Kp5Ls8';
const EMAIL = 'jane.customer@example-shop.com';

/** Repositories here declare no client: no lease is ever asked for. */
const noLeases: LeasePort = {
  acquire: () => Promise.reject(new LeaseUnavailableError('refused', 'no client is declared in this test')),
};

describe('evidence handler: review, verified storage and the receipt (repository without a client)', () => {
  let h: EvidenceHarness;
  beforeAll(async () => {
    h = await evidenceHarness();
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const handler = (repos: TargetRepository[]) =>
    new EvidenceHandler({
      store: h.ledger.store,
      artifacts: h.artifacts,
      runner: new ClientValidationRunner(
        new ChromiumBrowser({
          executablePath: '/usr/bin/chromium',
          args: DEFAULT_CHROMIUM_ARGS,
          launchTimeoutMs: 30_000,
        }),
        noLeases,
        {
          leaseTtlMs: 10_000,
          leaseWaitMs: 1000,
          renewWithinMs: 5000,
          readyTimeoutMs: 10_000,
          stepTimeoutMs: 5000,
          flowTimeoutMs: 30_000,
          viewport: { width: 800, height: 600 },
          trace: false,
        },
        { now: Date.now, newCaptureId: () => 'unused' },
      ),
      ...h.deps,
      // Every repository's remote is the harness's, where the cases' branches are pushed.
      repository: (id) => repos.map((r) => ({ ...r, url: h.remote })).find((r) => r.id === id),
      resource: 'browser:default',
      linkBase: null,
      now: () => new Date(),
    });

  const repo: TargetRepository = {
    id: 'shop',
    url: 'https://git.example.com/shop.git',
    targetBranch: 'main',
    checks: [{ name: 'focused', kind: 'focused_test', command: ['true'], timeoutMs: 1000 }],
  };

  it('redacts a seeded secret in a check log and an email in the diff, stores both verified, and keeps them out of the receipt', async () => {
    const caseId = 'C01JEVIDENCEREDACT0000000000';
    const wt = await caseWorktree(
      h.worktreesDir,
      caseId,
      { 'src/total.js': 'module.exports = 1;\n' },
      {
        'src/total.js': `// reported by ${EMAIL}\nmodule.exports = 2;\n`,
      },
    );
    const log = `ok 1 total counts quantities\nGITHUB_TOKEN=${SECRET}\n# pass 1\n`;
    const sha = await checkOutput(h, caseId, wt.revision, log);
    await h.append(caseId, 'coordinator', 'assign-1', [taskAssigned('T1', 'shop')]);
    const [checks] = await h.append(caseId, 'worker', 'checks-1', [
      checksCompleted('T1', wt.revision, wt.base, [{ name: 'focused', sha256: sha }]),
    ]);

    const result = await handler([repo]).onChecksCompleted(checks as RecordedEvent);
    expect(result.status).toBe('receipt_built');

    const events = await h.events(caseId);
    const stored = events.filter((e) => e.type === 'ArtifactStored');
    const byKind = (k: string) => stored.find((e) => e.type === 'ArtifactStored' && e.data.kind === k);
    const logStored = byKind('check_log');
    const diffStored = byKind('diff');
    if (logStored?.type !== 'ArtifactStored' || diffStored?.type !== 'ArtifactStored')
      throw new Error('log and diff must be stored');

    // Read back from S3: what is stored is the redacted text, addressed by its own digest.
    const storedLog = (await h.artifacts.read(logStored.data.key)).toString('utf8');
    expect(storedLog).not.toContain(SECRET);
    expect(storedLog).toContain('[redacted:github_token]');
    expect(storedLog).toContain('ok 1 total counts quantities');
    expect(logStored.data.key).toBe(`cases/${caseId}/${wt.revision}/${logStored.data.sha256}`);
    const storedDiff = (await h.artifacts.read(diffStored.data.key)).toString('utf8');
    expect(storedDiff).not.toContain(EMAIL);
    expect(storedDiff).toContain('[redacted:email]');
    expect(storedDiff).toContain('+module.exports = 2;');

    const reviews = events.filter((e) => e.type === 'ArtifactReviewed');
    expect(reviews.map((e) => e.type === 'ArtifactReviewed' && [e.data.kind, e.data.decision])).toEqual(
      expect.arrayContaining([
        ['check_log', 'redacted'],
        ['diff', 'redacted'],
        ['receipt', 'cleared'],
      ]),
    );

    const receipt = events.find((e) => e.type === 'ReceiptBuilt');
    if (receipt?.type !== 'ReceiptBuilt') throw new Error('no receipt');
    expect(receipt.producer).toBe('evidence');
    expect(receipt.causationId).toBe(checks?.eventId);
    expect(receipt.data).toMatchObject({
      outcome: 'pr_ready',
      revision: wt.revision,
      client: { outcome: 'not_declared' },
    });
    expect(receipt.data.evidence.map((e) => e.kind).sort()).toEqual(['check_log', 'diff']);
    const everything = JSON.stringify(events.filter((e) => e.producer === 'evidence'));
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(EMAIL);
    // The receipt itself is stored, verified, as an artifact of the revision.
    const receiptStored = byKind('receipt');
    if (receiptStored?.type !== 'ArtifactStored') throw new Error('receipt not stored');
    expect((await h.artifacts.read(receiptStored.data.key)).toString('utf8')).toBe(receipt.data.rendered);
  });

  it('is idempotent under redelivery: a second delivery appends nothing', async () => {
    const caseId = 'C01JEVIDENCEREDELIVER0000000';
    const wt = await caseWorktree(h.worktreesDir, caseId, { 'a.txt': 'a\n' }, { 'a.txt': 'b\n' });
    await h.append(caseId, 'coordinator', 'assign-2', [taskAssigned('T2', 'shop')]);
    const [checks] = await h.append(caseId, 'worker', 'checks-2', [
      checksCompleted('T2', wt.revision, wt.base, [{ name: 'focused', sha256: null }]),
    ]);
    const wf = handler([repo]);
    expect((await wf.onChecksCompleted(checks as RecordedEvent)).status).toBe('receipt_built');
    const count = (await h.events(caseId)).length;
    expect(await wf.onChecksCompleted(checks as RecordedEvent)).toEqual({
      status: 'done',
      receiptId: `receipt-${checks?.seq}`,
    });
    expect(await h.events(caseId)).toHaveLength(count);
  });

  it('rejects a check output whose bytes differ from the digest the worker recorded', async () => {
    const caseId = 'C01JEVIDENCEDIGEST0000000000';
    const wt = await caseWorktree(h.worktreesDir, caseId, { 'a.txt': 'a\n' }, { 'a.txt': 'c\n' });
    const sha = await checkOutput(h, caseId, wt.revision, 'original output\n');
    await h.putCheckLog(checkOutputArtifactPath(caseId, wt.revision, sha), 'tampered output\n');
    await h.append(caseId, 'coordinator', 'assign-3', [taskAssigned('T3', 'shop')]);
    const [checks] = await h.append(caseId, 'worker', 'checks-3', [
      checksCompleted('T3', wt.revision, wt.base, [{ name: 'focused', sha256: sha }]),
    ]);
    await handler([repo]).onChecksCompleted(checks as RecordedEvent);
    const events = await h.events(caseId);
    const review = events.find((e) => e.type === 'ArtifactReviewed' && e.data.kind === 'check_log');
    expect(review?.type === 'ArtifactReviewed' && review.data).toMatchObject({
      decision: 'rejected',
      sha256: sha,
    });
    expect(events.some((e) => e.type === 'ArtifactStored' && e.data.kind === 'check_log')).toBe(false);
  });
  it('waits while the revision is not on the remote, and proves it once the worker records the push', async () => {
    const caseId = 'C01JEVIDENCEWAITPUSH00000000';
    const wt = await caseWorktree(h.worktreesDir, caseId, { 'a.txt': 'a\n' }, { 'a.txt': 'pushed later\n' });
    // As the worker sees it right after the checks passed: the branch is not pushed yet.
    execFileSync('git', ['push', '-q', h.remote, '--delete', `caseloop/${caseId}`], { cwd: wt.path });
    await h.append(caseId, 'coordinator', 'assign-4', [taskAssigned('T4', 'shop')]);
    const [checks] = await h.append(caseId, 'worker', 'checks-4', [
      checksCompleted('T4', wt.revision, wt.base, [{ name: 'focused', sha256: null }]),
    ]);
    const wf = handler([repo]);
    expect(await wf.onChecksCompleted(checks as RecordedEvent)).toEqual({
      status: 'waiting',
      receiptId: null,
    });
    expect((await h.events(caseId)).some((e) => e.producer === 'evidence')).toBe(false);

    execFileSync('git', ['push', '-q', h.remote, `HEAD:refs/heads/caseloop/${caseId}`], { cwd: wt.path });
    const [pushed] = await h.append(caseId, 'worker', 'push-4', [
      draft('BranchPushed', {
        taskId: 'T4',
        branch: `caseloop/${caseId}`,
        revision: wt.revision,
        baseRevision: wt.base,
        created: true,
        draftPullRequestUrl: null,
      }),
    ]);
    expect(await wf.onBranchPushed(pushed as RecordedEvent)).toEqual({
      status: 'receipt_built',
      receiptId: `receipt-${checks?.seq}`,
    });
    const diff = (await h.events(caseId)).find((e) => e.type === 'ArtifactStored' && e.data.kind === 'diff');
    if (diff?.type !== 'ArtifactStored') throw new Error('no diff stored');
    expect((await h.artifacts.read(diff.data.key)).toString('utf8')).toContain('+pushed later');
    // The ChecksCompleted redelivered afterwards finds the work done.
    expect((await wf.onChecksCompleted(checks as RecordedEvent)).status).toBe('done');
  });
});
