import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AnswerFormat, ModelAdapter } from './judgement.port';
import { JudgementRoute } from './judgement.route';

type Route<K extends JudgementRoute['kind']> = Extract<JudgementRoute, { kind: K }>;

/** An OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, llama.cpp server…). */
export class OpenAiChatAdapter implements ModelAdapter {
  constructor(readonly route: Route<'openai'>) {}

  async complete(prompt: string, signal: AbortSignal, format?: AnswerFormat): Promise<string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.route.apiKeyFile)
      headers.authorization = `Bearer ${readFileSync(this.route.apiKeyFile, 'utf8').trim()}`;
    const res = await fetch(`${this.route.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers,
      signal,
      body: JSON.stringify({
        model: this.route.model,
        temperature: 0,
        // A structured answer when the question has a schema (endpoints that support it hold the
        // model to it); a JSON object otherwise.
        response_format: format
          ? { type: 'json_schema', json_schema: { name: format.name, strict: true, schema: format.schema } }
          : { type: 'json_object' },
        messages: [{ role: 'user', content: prompt }],
      }),
    });
    const body = await res.text();
    if (!res.ok) throw new Error(`chat endpoint answered ${res.status}: ${body.slice(0, 200)}`);
    const json = JSON.parse(body) as { choices?: Array<{ message?: { content?: unknown } }> };
    const content = json.choices?.[0]?.message?.content;
    if (typeof content !== 'string')
      throw new Error('chat endpoint answer has no choices[0].message.content');
    return content;
  }
}

/** Runs a CLI with the prompt on stdin (never in argv, where `ps` shows it); resolves stdout. */
export function runCli(argv: readonly string[], stdin: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    child.stdout.on('data', (b: Buffer) => {
      size += b.length;
      if (size <= 4 * 1024 * 1024) out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const onAbort = (): void => {
      child.kill('SIGKILL');
    };
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      signal.removeEventListener('abort', onAbort);
      reject(e);
    });
    child.on('close', (code) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) return reject(signal.reason as Error);
      if (code !== 0)
        return reject(
          new Error(`${argv[0]} exited with ${code}: ${Buffer.concat(err).toString('utf8').slice(-300)}`),
        );
      resolve(Buffer.concat(out).toString('utf8'));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

export const claudeJudgeArgv = (r: Route<'claude_code'>): string[] => [
  r.binary,
  '-p',
  '--model',
  r.model,
  '--output-format',
  'json',
  // A judgement reads nothing and edits nothing.
  '--permission-mode',
  'plan',
];

/** `claude -p --output-format json` prints one object: `{type: "result", is_error, result, …}`. */
export function claudeResultText(stdout: string): string {
  const json = JSON.parse(stdout.trim()) as { type?: string; is_error?: boolean; result?: unknown };
  if (json.is_error) throw new Error(`claude reported an error: ${String(json.result).slice(0, 200)}`);
  if (typeof json.result !== 'string') throw new Error('claude output has no result text');
  return json.result;
}

export class ClaudeCodeAdapter implements ModelAdapter {
  constructor(readonly route: Route<'claude_code'>) {}
  async complete(prompt: string, signal: AbortSignal): Promise<string> {
    return claudeResultText(await runCli(claudeJudgeArgv(this.route), prompt, signal));
  }
}

export const codexJudgeArgv = (r: Route<'codex'>): string[] => [
  r.binary,
  'exec',
  '--json',
  '--model',
  r.model,
  '--sandbox',
  'read-only',
  '--skip-git-repo-check',
  '-',
];

/**
 * `codex exec --json` prints JSON lines of events; the answer is the last agent message:
 * `{"type":"item.completed","item":{"type":"agent_message","text":…}}` (older releases:
 * `{"msg":{"type":"agent_message","message":…}}`). An `error`/`turn.failed` event is a failure.
 */
export function codexResultText(stdout: string): string {
  let last: string | null = null;
  for (const line of stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let e: {
      type?: string;
      item?: { type?: string; text?: unknown };
      msg?: { type?: string; message?: unknown };
      message?: unknown;
      error?: { message?: unknown };
    };
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (e.type === 'error' || e.type === 'turn.failed')
      throw new Error(`codex reported: ${String(e.message ?? e.error?.message ?? e.type).slice(0, 200)}`);
    if (e.type === 'item.completed' && e.item?.type === 'agent_message' && typeof e.item.text === 'string')
      last = e.item.text;
    if (e.msg?.type === 'agent_message' && typeof e.msg.message === 'string') last = e.msg.message;
  }
  if (last === null) throw new Error('codex output has no agent message');
  return last;
}

export class CodexAdapter implements ModelAdapter {
  constructor(readonly route: Route<'codex'>) {}
  async complete(prompt: string, signal: AbortSignal): Promise<string> {
    return codexResultText(await runCli(codexJudgeArgv(this.route), prompt, signal));
  }
}

export function modelAdapter(route: JudgementRoute): ModelAdapter {
  switch (route.kind) {
    case 'openai':
      return new OpenAiChatAdapter(route);
    case 'claude_code':
      return new ClaudeCodeAdapter(route);
    case 'codex':
      return new CodexAdapter(route);
  }
}
