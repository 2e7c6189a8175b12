import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkOutputArtifactPath } from '@caseloop/contracts';
import { TargetRepository } from '@caseloop/target-repositories';
import { LocalS3, startLocalS3 } from '@caseloop/testing';
import { ChecksRunner, firstFailedFocusedCheck } from './checks.runner';
import { createRedactor } from './output.redactor';
import { S3CheckLogStore } from './s3-check-log.store';

jest.setTimeout(60_000);

describe('checks on a worktree', () => {
  let root: string;
  let worktree: string;
  let runner: ChecksRunner;
  let s3: LocalS3;
  let logs: S3CheckLogStore;
  const revision = 'a'.repeat(40);

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-checks-'));
    worktree = join(root, 'wt');
    await mkdir(worktree);
    s3 = await startLocalS3({ dir: join(root, 's3') });
    logs = new S3CheckLogStore({
      endpoint: s3.endpoint,
      region: s3.region,
      bucket: 'check-logs',
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    });
    await logs.ensureBucket();
    runner = new ChecksRunner({
      logs,
      runsDir: join(root, 'runs'),
      inheritedEnv: { ...process.env, CASELOOP_NATS_PASS: 'nats-pass-value' },
      redact: createRedactor(['repo-credential-value']),
      outputLimitBytes: 64 * 1024,
      killGraceMs: 500,
    });
  });
  afterAll(async () => {
    logs?.close();
    await s3?.close();
    await rm(root, { recursive: true, force: true });
  });

  const repo = (checks: TargetRepository['checks']): TargetRepository => ({
    id: 'r',
    url: '/r',
    targetBranch: 'main',
    checks,
  });

  it('names the revision, keeps a bounded redacted output as an artifact addressed by its digest', async () => {
    const script = [
      'echo start-of-output',
      'echo token=ghp_abcdefghijklmnopqrstuvwxyz0123',
      'echo repo-credential-value',
      // about 5 MB of noise
      'yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstu | head -c 5000000',
      'echo end-of-output',
      'env | grep -c CASELOOP_ || true',
      'exit 3',
    ].join('\n');
    const [run] = await runner.runAll(
      repo([{ name: 'noisy', kind: 'focused_test', command: ['sh', '-c', script], timeoutMs: 30_000 }]),
      'Cchecks',
      worktree,
      revision,
    );
    if (!run) throw new Error('no result');
    expect(run.result).toMatchObject({
      name: 'noisy',
      kind: 'focused_test',
      outcome: 'failed',
      exitCode: 3,
      revision,
    });
    expect(run.blocker).toBeNull();
    const sha = run.result.outputSha256 as string;
    const stored = await logs.read(checkOutputArtifactPath('Cchecks', revision, sha));
    expect(createHash('sha256').update(stored).digest('hex')).toBe(sha);
    expect(stored.length).toBe(run.result.outputBytes);
    expect(stored.length).toBeLessThan(70 * 1024);
    const text = stored.toString('utf8');
    expect(text).toContain('start-of-output');
    expect(text).toMatch(/end-of-output\n0\n$/);
    expect(text).toMatch(/\[\.\.\. \d+ bytes omitted \.\.\.\]/);
    expect(text).not.toContain('ghp_abcdefghij');
    expect(text).not.toContain('repo-credential-value');
    expect(firstFailedFocusedCheck([run.result])).toBe('noisy');
  });

  it('stores a whole log far above 64 KiB by default and tells its progress check by check', async () => {
    const whole = new ChecksRunner({
      logs,
      runsDir: join(root, 'runs'),
      inheritedEnv: process.env,
      redact: createRedactor([]),
      killGraceMs: 500,
    });
    const seen: string[] = [];
    const runs = await whole.runAll(
      repo([
        { name: 'first', kind: 'lint', command: ['sh', '-c', 'echo linted'], timeoutMs: 10_000 },
        {
          name: 'suite',
          kind: 'regression_test',
          // about 414 kB, as a real suite prints: line numbers show nothing in the middle is lost
          command: [
            'sh',
            '-c',
            'i=0; while [ $i -lt 20000 ]; do echo "ok $i - a test that passes"; i=$((i+1)); done',
          ],
          timeoutMs: 30_000,
        },
      ]),
      'Cwhole',
      worktree,
      revision,
      {
        started: async (c, i, n) => {
          seen.push(`start ${c.name} ${i + 1}/${n}`);
        },
        finished: async (r, i, n) => {
          seen.push(`end ${r.result.name} ${i + 1}/${n} ${r.result.outcome}`);
        },
      },
    );
    expect(seen).toEqual([
      'start first 1/2',
      'end first 1/2 passed',
      'start suite 2/2',
      'end suite 2/2 passed',
    ]);
    const suite = runs[1]!;
    const text = (await logs.read(suite.logKey!)).toString('utf8');
    expect(suite.result.outputBytes).toBeGreaterThan(400_000);
    expect(text.length).toBe(suite.result.outputBytes);
    expect(text).not.toContain('bytes omitted');
    for (const n of [0, 9_999, 10_000, 19_999]) expect(text).toContain(`ok ${n} - a test that passes\n`);
    expect(suite.excerpt).toEqual({
      head: [0, 1, 2, 3, 4].map((n) => `ok ${n} - a test that passes`),
      tail: [19_995, 19_996, 19_997, 19_998, 19_999].map((n) => `ok ${n} - a test that passes`),
      omittedLines: 19_990,
    });
  });

  it('kills a check at its limit and records a timeout; an environment failure is a blocker', async () => {
    const runs = await runner.runAll(
      repo([
        { name: 'hangs', kind: 'regression_test', command: ['sh', '-c', 'sleep 60 & wait'], timeoutMs: 500 },
        {
          name: 'signing',
          kind: 'build',
          command: ['sh', '-c', 'echo "error: gpg failed to sign the data" >&2; exit 1'],
          timeoutMs: 5_000,
        },
        { name: 'missing', kind: 'lint', command: ['/no/such/linter'], timeoutMs: 5_000 },
        { name: 'ok', kind: 'format', command: ['true'], timeoutMs: 5_000 },
      ]),
      'Cchecks',
      worktree,
      revision,
    );
    expect(runs.map((r) => [r.result.name, r.result.outcome])).toEqual([
      ['hangs', 'timeout'],
      ['signing', 'failed'],
      ['missing', 'error'],
      ['ok', 'passed'],
    ]);
    expect(runs[0]!.result.durationMs).toBeLessThan(10_000);
    expect(runs[1]!.blocker).toMatchObject({ kind: 'signing' });
    expect(firstFailedFocusedCheck(runs.map((r) => r.result))).toBeNull();
  });
});
