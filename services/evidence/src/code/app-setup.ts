import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redactText } from '@caseloop/privacy';
import {
  readRepositorySecrets,
  redactValues,
  SecretFileError,
  type SetupStep,
  stepDirectory,
  stepEnvironment,
  type TargetRepository,
} from '@caseloop/target-repositories';

/** What a fresh checkout needs before its client can start (`npm ci`): the repository's setup steps. */
export interface AppSetup {
  /** Null when the checkout is ready, else why it is not (shown as the client's blocked reason). */
  prepare(repo: TargetRepository, checkout: string): Promise<string | null>;
}

type SetupStepLike = Pick<SetupStep, 'name' | 'command' | 'timeoutMs' | 'cwd' | 'env'>;

export interface RepositorySetupOptions {
  /** Where each step's throwaway HOME and TMPDIR are made; the system's temp directory when unset. */
  runsDir?: string;
  /** The package cache shared by every case this service prepares (`packageCacheEnvironment`). */
  cacheDir?: string;
  /** The service's environment: only PATH, locale and the host's CA, proxy and registry settings are taken. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  killGraceMs?: number;
}

/**
 * Runs the repository's `setup` steps in the checkout, one after another, each in its own process
 * group with its limit, under the same environment as the worker's steps (`stepEnvironment`: the
 * repository's and the step's `env`, its `secretFiles`, the shared cache, the host's CA settings;
 * nothing of the service's own). The first failing step stops the preparation; its exit and last
 * output line, with the secrets redacted, say why.
 */
export class RepositorySetupSteps implements AppSetup {
  constructor(private readonly opts: RepositorySetupOptions = {}) {}

  async prepare(repo: TargetRepository, checkout: string): Promise<string | null> {
    const steps = repo.setup ?? [];
    if (steps.length === 0) return null;
    let secrets: Record<string, string>;
    try {
      secrets = await readRepositorySecrets(repo);
    } catch (e) {
      if (e instanceof SecretFileError) return `setup cannot run: ${e.message}`;
      throw e;
    }
    const redact = (text: string) => redactText(redactValues(text, Object.values(secrets))).text;
    for (const step of steps) {
      let cwd: string;
      try {
        cwd = stepDirectory(checkout, step.cwd);
      } catch {
        return `setup step ${step.name}: cwd leaves the repository`;
      }
      const runsDir = this.opts.runsDir ?? tmpdir();
      await mkdir(runsDir, { recursive: true, mode: 0o700 });
      const dir = await mkdtemp(join(runsDir, 'setup-'));
      try {
        await mkdir(join(dir, 'home'));
        await mkdir(join(dir, 'tmp'));
        const env = stepEnvironment({
          inherited: this.opts.hostEnv ?? process.env,
          home: join(dir, 'home'),
          tmp: join(dir, 'tmp'),
          ...(this.opts.cacheDir ? { cacheDir: this.opts.cacheDir } : {}),
          repo,
          step,
          secrets,
        });
        const failure = await run(step, cwd, env, this.opts.killGraceMs ?? 2_000);
        if (failure) return `setup step ${step.name} failed: ${redact(failure)}`;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    return null;
  }
}

function run(
  step: SetupStepLike,
  cwd: string,
  env: Record<string, string>,
  graceMs: number,
): Promise<string | null> {
  const [program, ...args] = step.command;
  if (!program) return Promise.resolve('the command is empty');
  return new Promise((done) => {
    let tail = '';
    let timedOut = false;
    const child = spawn(program, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (c: Buffer) => {
      tail = (tail + c.toString('utf8')).slice(-2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const kill = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), graceMs).unref();
    }, step.timeoutMs);
    child.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done(`${e.code ?? 'error'}: cannot start ${program}`);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      kill('SIGKILL');
      if (timedOut) return done(`it did not finish within ${step.timeoutMs} ms`);
      if (code === 0) return done(null);
      const last = tail.trim().split('\n').at(-1)?.slice(0, 200) ?? '';
      done(`exit ${code ?? signal}${last ? `: ${last}` : ''}`);
    });
  });
}
