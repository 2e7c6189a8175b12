import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CheckResult, checkOutputArtifactPath } from '@caseloop/contracts';
import { CheckSpec, TargetRepository } from '@caseloop/target-repositories';
import { ProcessGroups } from '../processes/process-groups';
import { runProcess } from '../processes/process.runner';
import { BlockerFinding, classifyBlocker } from '../routing/blocker.classifier';
import { runtimeEnvironment } from '../runtimes/runtime.environment';

export interface CheckRun {
  result: CheckResult;
  /** Set when the failure is the environment's (permissions, signing, fixtures, devices, a busy client). */
  blocker: BlockerFinding | null;
}

export interface ChecksRunnerOptions {
  /** Shared with the evidence service: outputs land at `checkOutputArtifactPath(...)` below it. */
  artifactsDir: string;
  /** Per-run HOME and TMPDIR are created here. */
  runsDir: string;
  inheritedEnv: Readonly<Record<string, string | undefined>>;
  /** Redacts secrets and personal data from output before it is stored. */
  redact: (text: string) => string;
  /** Bytes kept of each check's output: the first and last halves. */
  outputLimitBytes?: number;
  killGraceMs?: number;
  groups?: ProcessGroups;
}

/**
 * Runs a repository's checks, one after another (they compete for the same CPUs), in the worktree,
 * each with its limit and process-group kill, under the same secret-free environment as an agent:
 * checks execute the agent's code. Every result names the commit it ran on.
 */
export class ChecksRunner {
  constructor(private readonly opts: ChecksRunnerOptions) {}

  async runAll(
    repo: TargetRepository,
    caseId: string,
    worktree: string,
    revision: string,
  ): Promise<CheckRun[]> {
    const runs: CheckRun[] = [];
    for (const check of repo.checks) runs.push(await this.runOne(check, caseId, worktree, revision));
    return runs;
  }

  private async runOne(
    check: CheckSpec,
    caseId: string,
    worktree: string,
    revision: string,
  ): Promise<CheckRun> {
    await mkdir(this.opts.runsDir, { recursive: true, mode: 0o700 });
    const dir = await mkdtemp(join(this.opts.runsDir, `${caseId}-check-`));
    try {
      const home = join(dir, 'home');
      const tmp = join(dir, 'tmp');
      await mkdir(home);
      await mkdir(tmp);
      const env = runtimeEnvironment({
        inherited: this.opts.inheritedEnv,
        home,
        tmp,
        extra: { CI: 'true' },
        providerCredentials: {},
      });
      const r = await runProcess({
        argv: check.command,
        cwd: worktree,
        env,
        timeoutMs: check.timeoutMs,
        outputLimitBytes: this.opts.outputLimitBytes ?? 64 * 1024,
        killGraceMs: this.opts.killGraceMs ?? 2_000,
        ...(this.opts.groups ? { groups: this.opts.groups } : {}),
      });
      const raw = r.spawnError ? `${r.spawnError}\n${r.combined.toString()}` : r.combined.toString();
      const output = this.opts.redact(raw);
      const outcome: CheckResult['outcome'] = r.timedOut
        ? 'timeout'
        : r.spawnError
          ? 'error'
          : r.exitCode === 0
            ? 'passed'
            : 'failed';
      const stored = await this.storeOutput(caseId, revision, output);
      const result: CheckResult = {
        name: check.name,
        kind: check.kind,
        outcome,
        revision,
        durationMs: r.durationMs,
        exitCode: r.exitCode,
        outputSha256: stored.sha256,
        outputBytes: stored.bytes,
      };
      const blocker = outcome === 'passed' ? null : classifyBlocker({ exitCode: r.exitCode, output });
      return { result, blocker };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Content-addressed: the same output twice is one file; a partial write is never visible. */
  private async storeOutput(
    caseId: string,
    revision: string,
    output: string,
  ): Promise<{ sha256: string; bytes: number }> {
    const body = Buffer.from(output, 'utf8');
    const sha256 = createHash('sha256').update(body).digest('hex');
    const path = join(this.opts.artifactsDir, checkOutputArtifactPath(caseId, revision, sha256));
    await mkdir(dirname(path), { recursive: true });
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, body);
    await rename(temp, path);
    return { sha256, bytes: body.length };
  }
}

/** The first failing focused check: what the escalation rule compares across attempts. */
export const firstFailedFocusedCheck = (results: readonly CheckResult[]): string | null =>
  results.find((r) => r.kind === 'focused_test' && r.outcome !== 'passed' && r.outcome !== 'skipped')?.name ??
  null;
