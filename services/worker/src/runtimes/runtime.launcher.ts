import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assertSafeId } from '@caseloop/contracts';
import { ProcessGroups } from '../processes/process-groups';
import { AgentRuntime, RuntimeResult } from './agent-runtime';
import { frameBrief } from './brief.framing';
import { RouteSpec } from './route.config';
import { createRuntime } from './runtime.factory';
import { runtimeEnvironment } from './runtime.environment';

export interface LaunchInput {
  caseId: string;
  attempt: number;
  brief: string;
  revisionNote: string | null;
  worktree: string;
}

export interface LaunchResult extends RuntimeResult {
  durationMs: number;
}

/**
 * Starts one attempt of a route: a private directory outside the worktree holds the brief file,
 * the runtime's HOME and TMPDIR; the environment is built from the allowlist; the directory is
 * removed afterwards, whatever the runtime did.
 */
export class RuntimeLauncher {
  constructor(
    private readonly opts: {
      runsDir: string;
      inheritedEnv: Readonly<Record<string, string | undefined>>;
      runtimeFor?: (route: RouteSpec) => AgentRuntime;
      groups?: ProcessGroups;
    },
  ) {}

  async launch(route: RouteSpec, input: LaunchInput): Promise<LaunchResult> {
    assertSafeId('caseId', input.caseId);
    await mkdir(this.opts.runsDir, { recursive: true, mode: 0o700 });
    const dir = await mkdtemp(join(this.opts.runsDir, `${input.caseId}-a${input.attempt}-`));
    const started = Date.now();
    try {
      const home = join(dir, 'home');
      const tmp = join(dir, 'tmp');
      await mkdir(home, { mode: 0o700 });
      await mkdir(tmp, { mode: 0o700 });
      const prompt = frameBrief({
        brief: input.brief,
        attempt: input.attempt,
        boundary: randomBytes(12).toString('hex'),
        revisionNote: input.revisionNote,
      });
      const briefFile = join(dir, 'brief.md');
      await writeFile(briefFile, prompt, { mode: 0o600 });
      const providerCredentials: Record<string, string> = {};
      for (const [name, file] of Object.entries(route.providerCredentialFiles)) {
        const value = await readFile(file, 'utf8').then(
          (v) => v.trim(),
          () => '',
        );
        if (!value) {
          // Reported like a runtime that cannot start: a blocker for a human, not a retry loop.
          return {
            exitCode: null,
            timedOut: false,
            stdoutTail: '',
            stderrTail: `the provider credential ${name} of route ${route.name} is missing or empty`,
            durationMs: Date.now() - started,
          };
        }
        providerCredentials[name] = value;
      }
      const env = runtimeEnvironment({
        inherited: this.opts.inheritedEnv,
        home,
        tmp,
        extra: route.env,
        providerCredentials,
      });
      const runtime = (this.opts.runtimeFor ?? ((r: RouteSpec) => createRuntime(r.runtime)))(route);
      const result = await runtime.run({
        prompt,
        briefFile,
        worktree: input.worktree,
        attempt: input.attempt,
        timeoutMs: route.timeoutMs,
        env,
        ...(this.opts.groups ? { groups: this.opts.groups } : {}),
      });
      return { ...result, durationMs: Date.now() - started };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
