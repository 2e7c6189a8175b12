import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckResult, checkOutputArtifactPath, OutputExcerpt } from '@caseloop/contracts';
import { HeadTailBuffer } from '@caseloop/platform';
import {
  CheckSpec,
  readRepositorySecrets,
  redactValues,
  SecretFileError,
  SetupStep,
  stepDirectory,
  stepEnvironment,
  TargetRepository,
} from '@caseloop/target-repositories';
import { ProcessGroups } from '../processes/process-groups';
import { ProcessResult, runProcess } from '../processes/process.runner';
import { BlockerFinding, classifyBlocker } from '../routing/blocker.classifier';
import { excerptOf } from './output.excerpt';
import { CheckLogStore } from './s3-check-log.store';
import { SetupCache, setupKey } from './setup.cache';

export interface CheckRun {
  result: CheckResult;
  /** Set when the failure is the environment's (permissions, signing, fixtures, devices, a busy client). */
  blocker: BlockerFinding | null;
  /** The first and last lines of the redacted output. */
  excerpt: OutputExcerpt;
  /** Where the whole redacted log is stored (`checkOutputArtifactPath`); null for a check that never ran. */
  logKey: string | null;
}

/** Told as each setup step and check starts and ends, so a long suite shows progress (the processor records it). */
export interface CheckProgress {
  started(check: { name: string; kind: CheckResult['kind'] }, index: number, total: number): Promise<void>;
  finished(run: CheckRun, index: number, total: number): Promise<void>;
}

/** Far above a real suite's log (a 414 kB test log is whole); only a runaway output is cut. */
export const DEFAULT_LOG_LIMIT = 32 * 1024 * 1024;

const NO_EXCERPT: OutputExcerpt = { head: [], tail: [], omittedLines: 0 };

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
  /** Package managers' caches shared by every case (`packageCacheEnvironment`); none when unset. */
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
    progress?: CheckProgress,
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
    const pending: { step: SetupStep; key: string }[] = [];
    for (const step of repo.setup ?? []) {
      const key = await setupKey(step, worktree, revision);
      if (await cache.isDone(step.name, key)) {
        this.opts.onStep?.({ phase: 'cached', kind: 'setup', name: step.name });
        continue;
      }
      pending.push({ step, key });
    }
    // What runs now, in order: the progress counts it.
    const total = pending.length + repo.checks.length;
    const tracked = async (index: number, runnable: Runnable, run: () => Promise<CheckRun>) => {
      await progress?.started(runnable, index, total);
      const done = await run();
      await progress?.finished(done, index, total);
      return done;
    };
    for (const [index, { step, key }] of pending.entries()) {
      const runnable: Runnable = { ...step, name: setupResultName(step), kind: 'other' };
      const run = await tracked(index, runnable, () =>
        this.runOne(runnable, 'setup', repo, secrets, caseId, worktree, revision),
      );
      runs.push(run);
      if (run.result.outcome !== 'passed') {
        await cache.forget(step.name);
        return [...runs, ...repo.checks.map((c) => this.notRun(c, revision, 'skipped'))];
      }
      await cache.record(step.name, key);
    }
    for (const [i, check] of repo.checks.entries())
      runs.push(
        await tracked(pending.length + i, check, () =>
          this.runOne(check, 'check', repo, secrets, caseId, worktree, revision),
        ),
      );
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
      excerpt: NO_EXCERPT,
      logKey: null,
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
      // The same environment as an agent's runtime: nothing of the worker's own, the secrets for this run only.
      const env = stepEnvironment({
        inherited: this.opts.inheritedEnv,
        home,
        tmp,
        ...(this.opts.cacheDir ? { cacheDir: this.opts.cacheDir } : {}),
        repo,
        step: check,
        secrets,
      });
      const cwd = stepDirectory(worktree, check.cwd);
      const limit = this.opts.outputLimitBytes ?? DEFAULT_LOG_LIMIT;
      // A missing directory would read as "cannot start <program>": say what is missing instead.
      const r = (await isDirectory(cwd))
        ? await runProcess({
            argv: check.command,
            cwd,
            env,
            timeoutMs: check.timeoutMs,
            // stdout and stderr alone are not kept; the interleaved stream is the log.
            outputLimitBytes: 4 * 1024,
            combinedLimitBytes: limit,
            killGraceMs: this.opts.killGraceMs ?? 2_000,
            ...(this.opts.groups ? { groups: this.opts.groups } : {}),
          })
        : notStarted(`the working directory ${check.cwd ?? '.'} does not exist at this revision`, 4 * 1024);
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
      const run: CheckRun = { result, blocker, excerpt: excerptOf(output), logKey: stored.key };
      this.opts.onStep?.({ phase: 'end', kind: phase, name: check.name, run, output });
      return run;
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
