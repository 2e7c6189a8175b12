import type { AgentUsage } from '@caseloop/contracts';

/**
 * Reads what an agent runtime reports of its own usage from its stdout, as the output streams by
 * (nothing is kept but what the report needs). Only what the runtime printed is recorded: a
 * missing field stays null, nothing is estimated from prices or token counts.
 *
 * Token counts mean the same for both runtimes: `inputTokens` is every input token the model
 * read, `cachedInputTokens` the part of it served from the prompt cache.
 */
export interface UsageReader {
  push(chunk: Buffer): void;
  result(): AgentUsage | null;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : null;
const sum = (...vs: (number | null)[]): number | null =>
  vs.every((v) => v === null) ? null : vs.reduce<number>((a, v) => a + (v ?? 0), 0);

/** Splits a byte stream into lines (UTF-8 safe across chunks); a line longer than `maxLine` is dropped. */
class Lines {
  private pending = '';
  private readonly decoder = new TextDecoder();
  private skipping = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLine = 8 * 1024 * 1024,
  ) {}

  push(chunk: Buffer): void {
    const text = this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl);
      if (!this.skipping) this.onLine(this.pending + piece);
      this.pending = '';
      this.skipping = false;
      start = nl + 1;
    }
    if (this.skipping) return;
    this.pending += text.slice(start);
    if (this.pending.length > this.maxLine) {
      this.pending = '';
      this.skipping = true;
    }
  }

  end(): void {
    if (!this.skipping && this.pending.trim() !== '') this.onLine(this.pending);
    this.pending = '';
  }
}

const parse = (line: string): unknown => {
  const t = line.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
};

/** Claude Code's result message (`--output-format json`, or the last line of `stream-json`). */
export function claudeCodeUsageOf(result: unknown): AgentUsage | null {
  if (!isObject(result) || result.type !== 'result') return null;
  const usage = isObject(result.usage) ? result.usage : {};
  const cost = result.total_cost_usd ?? result.cost_usd;
  const cacheRead = count(usage.cache_read_input_tokens);
  return {
    reportedBy: 'claude_code',
    costUsd: typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 ? cost : null,
    inputTokens: sum(count(usage.input_tokens), count(usage.cache_creation_input_tokens), cacheRead),
    cachedInputTokens: cacheRead,
    outputTokens: count(usage.output_tokens),
  };
}

export class ClaudeCodeUsageReader implements UsageReader {
  private last: unknown = undefined;
  private readonly lines = new Lines((line) => {
    const v = parse(line);
    // `--verbose` with `json` prints the whole conversation as one array; the result is its last message.
    const candidate = Array.isArray(v) ? v.findLast((m) => isObject(m) && m.type === 'result') : v;
    if (isObject(candidate) && candidate.type === 'result') this.last = candidate;
  });

  push(chunk: Buffer): void {
    this.lines.push(chunk);
  }

  result(): AgentUsage | null {
    this.lines.end();
    return claudeCodeUsageOf(this.last);
  }
}

/**
 * Codex `exec --json` events: every `turn.completed` carries that turn's `usage`, summed here; older
 * builds emitted `token_count` events whose `info.total_token_usage` is already cumulative.
 */
export class CodexUsageReader implements UsageReader {
  private turns: { input: number | null; cached: number | null; output: number | null } | null = null;
  private cumulative: Json | null = null;
  private readonly lines = new Lines((line) => {
    const v = parse(line);
    if (!isObject(v)) return;
    if (v.type === 'turn.completed' && isObject(v.usage)) {
      const t = this.turns ?? { input: null, cached: null, output: null };
      this.turns = {
        input: sum(t.input, count(v.usage.input_tokens)),
        cached: sum(t.cached, count(v.usage.cached_input_tokens)),
        output: sum(t.output, count(v.usage.output_tokens)),
      };
      return;
    }
    const msg = isObject(v.msg) ? v.msg : isObject(v.payload) ? v.payload : null;
    if (msg?.type === 'token_count' && isObject(msg.info) && isObject(msg.info.total_token_usage))
      this.cumulative = msg.info.total_token_usage;
  });

  push(chunk: Buffer): void {
    this.lines.push(chunk);
  }

  result(): AgentUsage | null {
    this.lines.end();
    if (this.turns) {
      return {
        reportedBy: 'codex',
        costUsd: null,
        inputTokens: this.turns.input,
        cachedInputTokens: this.turns.cached,
        outputTokens: this.turns.output,
      };
    }
    if (this.cumulative) {
      const u = this.cumulative;
      return {
        reportedBy: 'codex',
        costUsd: null,
        inputTokens: count(u.input_tokens),
        cachedInputTokens: count(u.cached_input_tokens),
        outputTokens: sum(count(u.output_tokens), count(u.reasoning_output_tokens)),
      };
    }
    return null;
  }
}
