import { spawn } from 'node:child_process';
import { relative, resolve } from 'node:path';
import type { SetupStep, TargetRepository } from '@caseloop/target-repositories';
import { appEnvironment } from '../browser/target-app.process';

/** What a fresh checkout needs before its client can start (`npm ci`): the repository's setup steps. */
export interface AppSetup {
  /** Null when the checkout is ready, else why it is not (shown as the client's blocked reason). */
  prepare(repo: TargetRepository, checkout: string): Promise<string | null>;
}

type SetupStepLike = Pick<SetupStep, 'name' | 'command' | 'timeoutMs' | 'cwd' | 'env'>;

/**
 * Runs the repository's `setup` steps in the checkout, one after another, each in its own process
 * group with its limit, under the client's environment (nothing of the service's own). The first
 * failing step stops the preparation; its exit and last output line say why.
 */
export class RepositorySetupSteps implements AppSetup {
  constructor(private readonly opts: { hostEnv?: NodeJS.ProcessEnv; killGraceMs?: number } = {}) {}

  async prepare(repo: TargetRepository, checkout: string): Promise<string | null> {
    const repoEnv = repo.env ?? {};
    for (const step of repo.setup ?? []) {
      const cwd = resolve(checkout, step.cwd ?? '.');
      if (relative(checkout, cwd).startsWith('..'))
        return `setup step ${step.name}: cwd leaves the repository`;
      const env = appEnvironment(this.opts.hostEnv ?? process.env, { ...repoEnv, ...(step.env ?? {}) });
      const failure = await run(step, cwd, env, this.opts.killGraceMs ?? 2_000);
      if (failure) return `setup step ${step.name} failed: ${failure}`;
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
