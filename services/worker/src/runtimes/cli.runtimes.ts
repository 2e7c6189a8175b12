import { runProcess } from '../processes/process.runner';
import { AgentRuntime, RuntimeResult, RuntimeRun, TAIL_BYTES } from './agent-runtime';
import { ClaudeCodeUsageReader, CodexUsageReader, UsageReader } from './usage.readers';

/** Argument vectors are pure so they can be checked without the CLIs installed. */
export const codexArgv = (
  binary: string,
  model: string,
  reasoningEffort: string,
  worktree: string,
): string[] => [
  binary,
  'exec',
  // JSONL events on stdout: their `turn.completed` lines carry the token counts.
  '--json',
  '--model',
  model,
  '-c',
  `model_reasoning_effort="${reasoningEffort}"`,
  '--sandbox',
  'workspace-write',
  '--cd',
  worktree,
  // `-`: the prompt comes on stdin, never on the command line where `ps` would show it.
  '-',
];

export const claudeCodeArgv = (binary: string, model: string): string[] => [
  binary,
  '-p',
  '--model',
  model,
  '--output-format',
  // The result message carries total_cost_usd and usage, recorded with the attempt.
  'json',
  '--permission-mode',
  'acceptEdits',
];

export const expandArgv = (
  template: readonly string[],
  run: Pick<RuntimeRun, 'briefFile' | 'worktree' | 'attempt'>,
): string[] =>
  template.map((a) =>
    a
      .replaceAll('{briefFile}', run.briefFile)
      .replaceAll('{worktree}', run.worktree)
      .replaceAll('{attempt}', String(run.attempt)),
  );

async function runArgv(argv: string[], input: RuntimeRun, usage?: UsageReader): Promise<RuntimeResult> {
  const r = await runProcess({
    argv,
    cwd: input.worktree,
    env: input.env,
    timeoutMs: input.timeoutMs,
    stdin: input.prompt,
    ...(usage ? { onStdout: (c: Buffer) => usage.push(c) } : {}),
    ...(input.groups ? { groups: input.groups } : {}),
  });
  return {
    exitCode: r.spawnError ? null : r.exitCode,
    timedOut: r.timedOut,
    stdoutTail: r.stdout.lastBytes(TAIL_BYTES),
    stderrTail: r.spawnError ?? r.stderr.lastBytes(TAIL_BYTES),
    usage: usage?.result() ?? null,
  };
}

export class CodexRuntime implements AgentRuntime {
  readonly kind = 'codex';
  constructor(private readonly opts: { binary: string; model: string; reasoningEffort: string }) {}
  run(input: RuntimeRun): Promise<RuntimeResult> {
    return runArgv(
      codexArgv(this.opts.binary, this.opts.model, this.opts.reasoningEffort, input.worktree),
      input,
      new CodexUsageReader(),
    );
  }
}

export class ClaudeCodeRuntime implements AgentRuntime {
  readonly kind = 'claude_code';
  constructor(private readonly opts: { binary: string; model: string }) {}
  run(input: RuntimeRun): Promise<RuntimeResult> {
    return runArgv(claudeCodeArgv(this.opts.binary, this.opts.model), input, new ClaudeCodeUsageReader());
  }
}

export class CommandRuntime implements AgentRuntime {
  readonly kind = 'command';
  constructor(private readonly template: readonly string[]) {}
  run(input: RuntimeRun): Promise<RuntimeResult> {
    return runArgv(expandArgv(this.template, input), input);
  }
}
