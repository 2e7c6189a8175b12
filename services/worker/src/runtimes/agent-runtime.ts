import type { AgentUsage } from '@caseloop/contracts';
import type { ProcessGroups } from '../processes/process-groups';

/** What every agent runtime gets: the brief as data, its worktree, a limit and a minimal environment. */
export interface RuntimeRun {
  /** The framed prompt (see `frameBrief`): caseloop's instructions around the reporter's brief as quoted data. */
  prompt: string;
  /** The same prompt as a file outside the worktree, for runtimes that read a file. */
  briefFile: string;
  /** The only working directory the runtime gets. */
  worktree: string;
  attempt: number;
  timeoutMs: number;
  /** The complete environment (see `runtimeEnvironment`): nothing of caseloop's is inherited. */
  env: Readonly<Record<string, string>>;
  /** Where the runtime registers its process group (killed if the worker shuts down). */
  groups?: ProcessGroups;
}

export interface RuntimeResult {
  exitCode: number | null;
  timedOut: boolean;
  stdoutTail: string;
  stderrTail: string;
  /** What the runtime reported of its usage (Claude Code, Codex); absent or null when it reports none. */
  usage?: AgentUsage | null;
}

export interface AgentRuntime {
  readonly kind: string;
  run(input: RuntimeRun): Promise<RuntimeResult>;
}

export const TAIL_BYTES = 4 * 1024;
