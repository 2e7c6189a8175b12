import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CheckResult, checkOutputArtifactPath } from '@caseloop/contracts';
import { CheckSpec, SetupStep, TargetRepository } from '@caseloop/target-repositories';
import { ProcessGroups } from '../processes/process-groups';
import { HeadTailBuffer } from '../processes/head-tail.buffer';
import { ProcessResult, runProcess } from '../processes/process.runner';
import { BlockerFinding, classifyBlocker } from '../routing/blocker.classifier';
import { runtimeEnvironment } from '../runtimes/runtime.environment';
import {
  packageCacheEnvironment,
  readRepositorySecrets,
  redactValues,
  SecretFileError,
  stepDirectory,
} from './check.environment';
import { SetupCache, setupKey } from './setup.cache';

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
  /** Package managers' caches shared by every case (see `packageCacheEnvironment`); none when unset. */
  cacheDir?: string;
  /** Told when a setup step or check starts and ends (`caseloop repo check` prints it). */
  onStep?: (event: StepEvent) => void;
}

export type StepEvent =
  | { phase: 'start'; kind: 'setup' | 'check'; name: string }
  | { phase: 'cached'; kind: 'setup'; name: string }
  | { phase: 'end'; kind: 'setup' | 'check'; name: string; run: CheckRun; output: string };

/** How a setup step appears among the results: before the checks, `setup:<name>`. */
export const setupResultName = (step: SetupStep): string => `setup:${step.name}`.slice(0, 100);

type Runnable = Pick<CheckSpec, 'name' | 'kind' | 'command' | 'timeoutMs' | 'cwd' | 'env'>;

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
    let secrets: Record<string, string>;
    try {
      secrets = await readRepositorySecrets(repo);
    } catch (e) {
      if (!(e instanceof SecretFileError)) throw e;
      // Nothing can run without its secret: every check says so, none is a failure of the change.
      return repo.checks.map((c) => this.notRun(c, revision, 'error'));
    }
    // Setup first, once per worktree and inputs; a failed step skips everything after it.
    const cache = new SetupCache(worktree);
    for (const step of repo.setup ?? []) {
      const key = await setupKey(step, worktree, revision);
      if (await cache.isDone(step.name, key)) {
        this.opts.onStep?.({ phase: 'cached', kind: 'setup', name: step.name });
        continue;
      }
      const run = await this.runOne(
        { ...step, name: setupResultName(step), kind: 'other' },
        'setup',
        repo,
        secrets,
        caseId,
        worktree,
        revision,
      );
      runs.push(run);
      if (run.result.outcome !== 'passed') {
        await cache.forget(step.name);
        return [...runs, ...repo.checks.map((c) => this.notRun(c, revision, 'skipped'))];
      }
      await cache.record(step.name, key);
    }
    for (const check of repo.checks)
      runs.push(await this.runOne(check, 'check', repo, secrets, caseId, worktree, revision));
    return runs;
  }

  /** A check that never ran: `skipped` after a failed setup step, `error` when its secrets are missing. */
  private notRun(check: CheckSpec, revision: string, outcome: 'skipped' | 'error'): CheckRun {
    return {
      result: {
        name: check.name,
        kind: check.kind,
        outcome,
        revision,
        durationMs: 0,
        exitCode: null,
        outputSha256: null,
        outputBytes: 0,
      },
      blocker:
        outcome === 'error'
          ? { kind: 'permissions', reason: 'a secret file the repository configures cannot be read' }
          : null,
    };
  }

  private async runOne(
    check: Runnable,
    phase: 'setup' | 'check',
    repo: TargetRepository,
    secrets: Record<string, string>,
    caseId: string,
    worktree: string,
    revision: string,
  ): Promise<CheckRun> {
    this.opts.onStep?.({ phase: 'start', kind: phase, name: check.name });
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
        extra: {
          ...(this.opts.cacheDir ? packageCacheEnvironment(this.opts.cacheDir) : {}),
          ...(repo.env ?? {}),
          ...(check.env ?? {}),
          CI: 'true',
        },
        // Not a provider's credential, but the same path into the child: only for this run, never logged.
        providerCredentials: secrets,
      });
      const cwd = stepDirectory(worktree, check.cwd);
      const limit = this.opts.outputLimitBytes ?? 64 * 1024;
      // A missing directory would read as "cannot start <program>": say what is missing instead.
      const r = (await isDirectory(cwd))
        ? await runProcess({
            argv: check.command,
            cwd,
            env,
            timeoutMs: check.timeoutMs,
            outputLimitBytes: limit,
            killGraceMs: this.opts.killGraceMs ?? 2_000,
            ...(this.opts.groups ? { groups: this.opts.groups } : {}),
          })
        : notStarted(`the working directory ${check.cwd ?? '.'} does not exist at this revision`, limit);
      const raw = r.spawnError ? `${r.spawnError}\n${r.combined.toString()}` : r.combined.toString();
      const output = this.opts.redact(redactValues(raw, Object.values(secrets)));
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
      const run = { result, blocker };
      this.opts.onStep?.({ phase: 'end', kind: phase, name: check.name, run, output });
      return run;
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

function notStarted(reason: string, limit: number): ProcessResult {
  const empty = () => new HeadTailBuffer(limit);
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    durationMs: 0,
    spawnError: reason,
    stdout: empty(),
    stderr: empty(),
    combined: empty(),
  };
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The first failing focused check: what the escalation rule compares across attempts. */
export const firstFailedFocusedCheck = (results: readonly CheckResult[]): string | null =>
  results.find((r) => r.kind === 'focused_test' && r.outcome !== 'passed' && r.outcome !== 'skipped')?.name ??
  null;
