import { cp } from 'node:fs/promises';
import { runProcess } from '../processes/process.runner';
import { AgentRuntime, RuntimeResult, RuntimeRun, TAIL_BYTES } from './agent-runtime';
import { ScriptedStep } from './route.config';

/**
 * Applies a prepared change per attempt number: a patch (`git apply`) or a directory copied over the
 * worktree. Tests and the sandbox script "attempt 1 writes X, attempt 2 writes Y" with it.
 */
export class ScriptedRuntime implements AgentRuntime {
  readonly kind = 'scripted';
  constructor(private readonly steps: readonly ScriptedStep[]) {}

  async run(input: RuntimeRun): Promise<RuntimeResult> {
    const step = this.steps[input.attempt - 1];
    if (!step)
      return {
        exitCode: 0,
        timedOut: false,
        stdoutTail: `no scripted step for attempt ${input.attempt}`,
        stderrTail: '',
      };
    const out: string[] = [];
    if (step.patch) {
      const r = await runProcess({
        argv: ['git', 'apply', '--whitespace=nowarn', step.patch],
        cwd: input.worktree,
        env: input.env,
        timeoutMs: input.timeoutMs,
        ...(input.groups ? { groups: input.groups } : {}),
      });
      if (r.spawnError || r.exitCode !== 0 || r.timedOut) {
        return {
          exitCode: r.exitCode ?? 1,
          timedOut: r.timedOut,
          stdoutTail: r.stdout.lastBytes(TAIL_BYTES),
          stderrTail: r.spawnError ?? r.stderr.lastBytes(TAIL_BYTES),
        };
      }
      out.push(`applied ${step.patch}`);
    }
    if (step.copy) {
      try {
        await cp(step.copy, input.worktree, { recursive: true, force: true });
      } catch (e) {
        return {
          exitCode: 1,
          timedOut: false,
          stdoutTail: out.join('\n'),
          stderrTail: `copy failed: ${(e as NodeJS.ErrnoException).code ?? 'error'}`,
        };
      }
      out.push(`copied ${step.copy}`);
    }
    return { exitCode: step.exitCode, timedOut: false, stdoutTail: out.join('\n'), stderrTail: '' };
  }
}
