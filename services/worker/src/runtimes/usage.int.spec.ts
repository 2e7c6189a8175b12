import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routeSpec } from './route.config';
import { RuntimeLauncher } from './runtime.launcher';

jest.setTimeout(60_000);

/**
 * Fake `claude` and `codex` binaries that behave like the real CLIs on the argument vectors the
 * worker gives them: they read the prompt on stdin and print their real output formats.
 */
const CLAUDE_RESULT = {
  type: 'result',
  subtype: 'success',
  is_error: false,
  duration_ms: 61234,
  duration_api_ms: 58012,
  num_turns: 14,
  result: 'Fixed the total: quantities are now multiplied before summing.',
  session_id: '3f1c2a4e-9a7b-4f0e-8c1d-2b3a4c5d6e7f',
  total_cost_usd: 0.4213,
  usage: {
    input_tokens: 31,
    cache_creation_input_tokens: 12045,
    cache_read_input_tokens: 210334,
    output_tokens: 3120,
    server_tool_use: { web_search_requests: 0 },
    service_tier: 'standard',
  },
};

const CODEX_EVENTS = [
  { type: 'thread.started', thread_id: '0199a213-81c0-7800-8aa1-bbab2a035a53' },
  { type: 'turn.started' },
  {
    type: 'item.completed',
    item: { id: 'item_0', type: 'reasoning', text: '**Looking at the cart total**' },
  },
  {
    type: 'item.completed',
    item: {
      id: 'item_1',
      type: 'command_execution',
      command: 'bash -lc "grep -n total src/cart.js"',
      aggregated_output: '3: return items.reduce((a, i) => a + i.price, 0);\n',
      exit_code: 0,
      status: 'completed',
    },
  },
  { type: 'item.completed', item: { id: 'item_2', type: 'agent_message', text: 'Done.' } },
  { type: 'turn.completed', usage: { input_tokens: 24763, cached_input_tokens: 24448, output_tokens: 122 } },
];

describe('agent usage as the runtimes report it', () => {
  let root: string;
  let worktree: string;
  let launcher: RuntimeLauncher;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-usage-'));
    worktree = join(root, 'worktree');
    await mkdir(worktree);
    launcher = new RuntimeLauncher({ runsDir: join(root, 'runs'), inheritedEnv: process.env });
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const fake = async (name: string, script: string): Promise<string> => {
    const file = join(root, name);
    await writeFile(file, `#!/bin/sh\n${script}\n`);
    await chmod(file, 0o755);
    return file;
  };
  const launch = (runtime: unknown) =>
    launcher.launch(routeSpec.parse({ name: 'r', runtime, timeoutMs: 20_000 }), {
      caseId: 'Cusage',
      attempt: 1,
      brief: 'Fix the total.',
      revisionNote: null,
      worktree,
    });

  it("records Claude Code's total_cost_usd and token usage from its --output-format json result", async () => {
    const json = join(root, 'claude-result.json');
    await writeFile(json, JSON.stringify(CLAUDE_RESULT));
    const binary = await fake(
      'claude',
      // The real CLI refuses to run without its flags; so does the fake.
      `case "$*" in *"--output-format json"*) ;; *) echo "unexpected arguments: $*" >&2; exit 2;; esac\ncat > /dev/null\ncat ${json}`,
    );
    const r = await launch({ kind: 'claude_code', binary, model: 'claude-sonnet-4-5' });
    expect(r.exitCode).toBe(0);
    expect(r.usage).toEqual({
      reportedBy: 'claude_code',
      costUsd: 0.4213,
      inputTokens: 31 + 12045 + 210334,
      cachedInputTokens: 210334,
      outputTokens: 3120,
    });
  });

  it('sums the token counts of every turn.completed event Codex prints with exec --json', async () => {
    const jsonl = join(root, 'codex.jsonl');
    const second = {
      type: 'turn.completed',
      usage: { input_tokens: 1000, cached_input_tokens: 0, output_tokens: 8 },
    };
    await writeFile(jsonl, [...CODEX_EVENTS, second].map((e) => JSON.stringify(e)).join('\n') + '\n');
    const binary = await fake(
      'codex',
      `case "$*" in "exec --json "*) ;; *) echo "unexpected arguments: $*" >&2; exit 2;; esac\ncat > /dev/null\ncat ${jsonl}`,
    );
    const r = await launch({ kind: 'codex', binary, model: 'gpt-5-codex', reasoningEffort: 'high' });
    expect(r.exitCode).toBe(0);
    expect(r.usage).toEqual({
      reportedBy: 'codex',
      costUsd: null,
      inputTokens: 25763,
      cachedInputTokens: 24448,
      outputTokens: 130,
    });
  });

  it('records nothing when the output carries no report (a crash before the result, a plain command)', async () => {
    const binary = await fake(
      'claude-crash',
      'cat > /dev/null\necho "Error: credit balance is too low" >&2\nexit 1',
    );
    const crashed = await launch({ kind: 'claude_code', binary, model: 'claude-sonnet-4-5' });
    expect(crashed.exitCode).toBe(1);
    expect(crashed.usage).toBeNull();
    const plain = await launch({
      kind: 'command',
      argv: ['sh', '-c', 'echo \'{"type":"result","total_cost_usd":9}\''],
    });
    expect(plain.usage ?? null).toBeNull();
  });
});
