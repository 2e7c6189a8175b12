import { ClaudeCodeUsageReader, CodexUsageReader } from './usage.readers';

const feed = (reader: { push(c: Buffer): void }, text: string, size = 7): void => {
  // Small chunks: a report split mid-line (and mid-character) must still be read.
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
};

describe('usage readers', () => {
  it('reads the result message of Claude Code stream-json among other lines, across chunk borders', () => {
    const r = new ClaudeCodeUsageReader();
    feed(
      r,
      [
        JSON.stringify({ type: 'system', subtype: 'init', session_id: 's' }),
        JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'Prüfe…' }] } }),
        JSON.stringify({
          type: 'result',
          total_cost_usd: 0.05,
          usage: { input_tokens: 10, output_tokens: 3 },
        }),
      ].join('\n'),
    );
    expect(r.result()).toEqual({
      reportedBy: 'claude_code',
      costUsd: 0.05,
      inputTokens: 10,
      cachedInputTokens: null,
      outputTokens: 3,
    });
  });

  it('reads the result out of the verbose json array', () => {
    const r = new ClaudeCodeUsageReader();
    feed(r, JSON.stringify([{ type: 'system' }, { type: 'result', total_cost_usd: 1.5, usage: {} }]));
    expect(r.result()).toMatchObject({ costUsd: 1.5, inputTokens: null, outputTokens: null });
  });

  it('takes the latest cumulative token_count of older Codex builds', () => {
    const r = new CodexUsageReader();
    const tc = (input: number, output: number) =>
      JSON.stringify({
        id: '0',
        msg: {
          type: 'token_count',
          info: {
            total_token_usage: {
              input_tokens: input,
              cached_input_tokens: 5,
              output_tokens: output,
              reasoning_output_tokens: 2,
            },
          },
        },
      });
    feed(r, `${tc(100, 10)}\nnot json\n${tc(300, 30)}\n`);
    expect(r.result()).toEqual({
      reportedBy: 'codex',
      costUsd: null,
      inputTokens: 300,
      cachedInputTokens: 5,
      outputTokens: 32,
    });
  });

  it('reports nothing for output without a report, and refuses negative or non-numeric counts', () => {
    const none = new CodexUsageReader();
    feed(none, 'hello\n{"type":"turn.started"}\n');
    expect(none.result()).toBeNull();
    const odd = new ClaudeCodeUsageReader();
    feed(
      odd,
      JSON.stringify({
        type: 'result',
        total_cost_usd: -1,
        usage: { input_tokens: 'many', output_tokens: 4 },
      }),
    );
    expect(odd.result()).toEqual({
      reportedBy: 'claude_code',
      costUsd: null,
      inputTokens: null,
      cachedInputTokens: null,
      outputTokens: 4,
    });
  });
});
