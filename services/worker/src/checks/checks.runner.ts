import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckResult, checkOutputArtifactPath, OutputExcerpt } from '@caseloop/contracts';
import { CheckSpec, TargetRepository } from '@caseloop/target-repositories';
import { ProcessGroups } from '../processes/process-groups';
import { runProcess } from '../processes/process.runner';
import { BlockerFinding, classifyBlocker } from '../routing/blocker.classifier';
import { runtimeEnvironment } from '../runtimes/runtime.environment';
import { excerptOf } from './output.excerpt';
import { CheckLogStore } from './s3-check-log.store';

export interface CheckRun {
  result: CheckResult;
  /** Set when the failure is the environment's (permissions, signing, fixtures, devices, a busy client). */
  blocker: BlockerFinding | null;
  /** The first and last lines of the redacted output. */
  excerpt: OutputExcerpt;
  /** Where the whole redacted log is stored (`checkOutputArtifactPath`). */
  logKey: string;
}

/** Told as each check starts and ends, so a long suite shows progress (the processor records it). */
export interface CheckProgress {
  started(check: { name: string; kind: CheckResult['kind'] }, index: number, total: number): Promise<void>;
  finished(run: CheckRun, index: number, total: number): Promise<void>;
}

export interface ChecksRunnerOptions {
  /** The check-log bucket: each whole output lands at `checkOutputArtifactPath(...)`; the evidence service reads it there. */
  logs: CheckLogStore;
  /** Per-run HOME and TMPDIR are created here. */
  runsDir: string;
  inheritedEnv: Readonly<Record<string, string | undefined>>;
  /** Redacts secrets and personal data from output before it is stored. */
  redact: (text: string) => string;
  /** A cap on each check's stored output (the first and last halves beyond it); far above any real log. */
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
    progress?: CheckProgress,
  ): Promise<CheckRun[]> {
    const runs: CheckRun[] = [];
    const total = repo.checks.length;
    for (const [index, check] of repo.checks.entries()) {
      await progress?.started(check, index, total);
      const run = await this.runOne(check, caseId, worktree, revision);
      await progress?.finished(run, index, total);
      runs.push(run);
    }
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
        // stdout and stderr alone are not kept; the interleaved stream is the log.
        outputLimitBytes: 4 * 1024,
        combinedLimitBytes: this.opts.outputLimitBytes ?? DEFAULT_LOG_LIMIT,
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
      return { result, blocker, excerpt: excerptOf(output), logKey: stored.key };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Content-addressed: the same output twice is one object, stored before any event names it. */
  private async storeOutput(
    caseId: string,
    revision: string,
    output: string,
  ): Promise<{ sha256: string; bytes: number; key: string }> {
    const body = Buffer.from(output, 'utf8');
    const sha256 = createHash('sha256').update(body).digest('hex');
    const key = checkOutputArtifactPath(caseId, revision, sha256);
    await this.opts.logs.put(key, body, sha256);
    return { sha256, bytes: body.length, key };
  }
}

/** Far above a real suite's log (a 414 kB test log is whole); only a runaway output is cut. */
export const DEFAULT_LOG_LIMIT = 32 * 1024 * 1024;

/** The first failing focused check: what the escalation rule compares across attempts. */
export const firstFailedFocusedCheck = (results: readonly CheckResult[]): string | null =>
  results.find((r) => r.kind === 'focused_test' && r.outcome !== 'passed' && r.outcome !== 'skipped')?.name ??
  null;
