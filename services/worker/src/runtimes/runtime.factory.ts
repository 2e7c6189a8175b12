import { AgentRuntime } from './agent-runtime';
import { ClaudeCodeRuntime, CodexRuntime, CommandRuntime } from './cli.runtimes';
import { RuntimeSpec } from './route.config';
import { ScriptedRuntime } from './scripted.runtime';

export function createRuntime(spec: RuntimeSpec): AgentRuntime {
  switch (spec.kind) {
    case 'codex':
      return new CodexRuntime(spec);
    case 'claude_code':
      return new ClaudeCodeRuntime(spec);
    case 'command':
      return new CommandRuntime(spec.argv);
    case 'scripted':
      return new ScriptedRuntime(spec.steps);
  }
}
