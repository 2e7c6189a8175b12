import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkOutputArtifactPath } from '@caseloop/contracts';
import { TargetRepository } from '@caseloop/target-repositories';
import { ChecksRunner, firstFailedFocusedCheck } from './checks.runner';
import { createRedactor } from './output.redactor';

jest.setTimeout(60_000);

describe('checks on a worktree', () => {
  let root: string;
  let worktree: string;
  let runner: ChecksRunner;
  const revision = 'a'.repeat(40);

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-checks-'));
    worktree = join(root, 'wt');
    await mkdir(worktree);
    runner = new ChecksRunner({
      artifactsDir: join(root, 'artifacts'),
      runsDir: join(root, 'runs'),
      inheritedEnv: { ...process.env, CASELOOP_NATS_PASS: 'nats-pass-value' },
      redact: createRedactor(['repo-credential-value']),
      outputLimitBytes: 64 * 1024,
      killGraceMs: 500,
    });
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

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
    const stored = await readFile(join(root, 'artifacts', checkOutputArtifactPath('Cchecks', revision, sha)));
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
