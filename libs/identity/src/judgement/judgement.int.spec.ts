import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityConfig } from '../identity.config';
import { IdentityIndex } from '../identity-index';
import { decideWithJudge } from './judged.decision';
import { Judgement, judgeSameCause, promptHash, sameCausePrompt } from './judgement.port';
import { judgementRouteSchema } from './judgement.route';
import { modelAdapter } from './model.adapters';

/** A scripted OpenAI-compatible server: each test says what the next completion returns. */
let server: Server;
let baseUrl = '';
let next: (body: { model: string; messages: Array<{ content: string }> }, res: ServerResponse) => void;
const seen: Array<{ model: string; prompt: string; auth: string | undefined }> = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      if (req.url !== '/v1/chat/completions' || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as { model: string; messages: Array<{ content: string }> };
      seen.push({
        model: body.model,
        prompt: body.messages[0]?.content ?? '',
        auth: req.headers.authorization,
      });
      next(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const chat = (content: string) => (_b: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }),
  );
};

function shop(): IdentityIndex {
  const i = new IdentityIndex(identityConfig());
  i.add(
    'C-cart',
    's1',
    'The cart total ignores quantities: two apples and one cheese show €9.40 instead of €12.90',
    null,
    Date.parse('2026-01-05T10:00:00Z'),
  );
  i.add(
    'C-login',
    's2',
    'Login with Google fails with 403 on the callback page',
    null,
    Date.parse('2026-01-04T10:00:00Z'),
  );
  return i;
}
const bob = {
  text: 'Checkout is charging the wrong amount — with 3 bananas in the basket I only pay for one banana',
  at: Date.parse('2026-01-05T12:00:00Z'),
};

const openai = (timeoutMs = 5000) =>
  modelAdapter(judgementRouteSchema.parse({ kind: 'openai', baseUrl, model: 'qwen2.5:7b', timeoutMs }));

describe('judgement port against an OpenAI-compatible server', () => {
  it('on "same" for a shown candidate lifts the offline decision one step, and records route, prompt hash, verdict and rationale', async () => {
    next = chat(
      '{"verdict":"same","caseId":"C-cart","rationale":"Both totals count each product once, ignoring quantity."}',
    );
    const index = shop();
    const { decision, judgement } = await decideWithJudge(index, bob, openai(), {
      briefOf: (id) => index.brief(id),
    });
    // Bob's paraphrase scores below the review band offline: the model's "same" brings it to a
    // reviewer with the case named, never straight onto the case
    expect(index.decide(bob).decision).toBe('new');
    expect(decision).toMatchObject({ decision: 'review', matchedWith: 'C-cart' });
    expect(decision.reasons).toContain('offline score below the review band: a reviewer confirms');
    const j = judgement as Judgement;
    expect(j).toMatchObject({
      route: 'openai:qwen2.5:7b@openai',
      verdict: 'same',
      caseId: 'C-cart',
      fallback: null,
    });
    expect(j.rationale).toMatch(/quantity/);
    const sent = seen.at(-1) as { prompt: string; model: string };
    expect(sent.model).toBe('qwen2.5:7b');
    expect(j.promptHash).toBe(promptHash(sent.prompt));
    expect(sent.prompt).toContain('CANDIDATE C-cart');
  });

  it('"different" keeps a report out of every shown case', async () => {
    next = chat('```json\n{"verdict":"different","caseId":null,"rationale":"Another cause."}\n```');
    const index = shop();
    const { decision, judgement } = await decideWithJudge(index, bob, openai(), {
      briefOf: (id) => index.brief(id),
    });
    expect(judgement?.verdict).toBe('different');
    expect(decision.decision).not.toBe('link');
  });

  it('a timeout falls back to the offline decision, visibly', async () => {
    next = () => undefined; // never answers
    const index = shop();
    const fallbacks: Judgement[] = [];
    const offline = index.decide(bob);
    const { decision, judgement } = await decideWithJudge(index, bob, openai(300), {
      briefOf: (id) => index.brief(id),
      hooks: { onFallback: (j) => fallbacks.push(j) },
    });
    expect(judgement?.fallback?.reason).toBe('timeout');
    expect(fallbacks).toHaveLength(1);
    expect(decision.decision).toBe(offline.decision);
    expect(decision.reasons.join('\n')).toMatch(/model fallback \(timeout\)/);
  });

  it('a failing endpoint and an unusable answer fall back too', async () => {
    next = (_b, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream exploded');
    const q = { report: bob.text, candidates: [{ caseId: 'C-cart', brief: 'cart total wrong' }] };
    const failed = await judgeSameCause(openai(), q);
    expect(failed.fallback).toMatchObject({ reason: 'error' });
    expect(failed.fallback?.detail).toMatch(/500/);
    next = chat('I think they are probably the same bug!');
    expect((await judgeSameCause(openai(), q)).fallback?.reason).toBe('invalid_answer');
    next = chat('{"verdict":"same","caseId":"C-unknown","rationale":"x"}');
    expect(await judgeSameCause(openai(), q)).toMatchObject({ verdict: 'unsure', fallback: null });
  });

  it('never links a candidate whose signatures conflict, whatever the model says', async () => {
    const index = new IdentityIndex(identityConfig());
    index.add('C-413', 's1', 'Uploading a 30 MB file fails with 413 Payload Too Large since 4.3', null, 1);
    next = chat('{"verdict":"same","caseId":"C-413","rationale":"uploads fail"}');
    const { decision } = await decideWithJudge(
      index,
      { text: 'Uploading a 30 MB file fails with 504 Gateway Timeout since 4.3', at: 2 },
      openai(),
      { briefOf: (id) => index.brief(id) },
    );
    expect(decision.decision).toBe('review');
    expect(decision.reasons.join('\n')).toMatch(/conflicting signatures: a reviewer decides/);
  });

  it('sends the API key from its file as a bearer token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'judge-key-'));
    writeFileSync(join(dir, 'key'), 'sk-test-123\n');
    next = chat('{"verdict":"unsure","caseId":null,"rationale":"not enough detail"}');
    const a = modelAdapter(
      judgementRouteSchema.parse({ kind: 'openai', baseUrl, model: 'm1', apiKeyFile: join(dir, 'key') }),
    );
    await judgeSameCause(a, { report: 'r', candidates: [{ caseId: 'C1', brief: 'b' }] });
    expect(seen.at(-1)?.auth).toBe('Bearer sk-test-123');
  });
});

/** Fake CLIs that print what the real ones print, and record their argv and stdin. */
function fakeCli(name: string, script: string): { binary: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), `fake-${name}-`));
  const binary = join(dir, name);
  writeFileSync(
    binary,
    `#!/usr/bin/env node
const fs = require('fs');
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  fs.writeFileSync(${JSON.stringify(dir)} + '/argv.json', JSON.stringify({ argv: process.argv.slice(2), stdin: input }));
  ${script}
});
`,
  );
  chmodSync(binary, 0o755);
  return { binary, dir };
}

describe('judgement port against fake CLIs', () => {
  const q = {
    report: bob.text,
    candidates: [{ caseId: 'C-cart', brief: 'The cart total ignores quantities' }],
  };

  it('Claude Code: -p --output-format json, prompt on stdin, the result field parsed', async () => {
    const { binary, dir } = fakeCli(
      'claude',
      `process.stdout.write(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, duration_ms: 812, duration_api_ms: 790, num_turns: 1, result: 'Looking at both: {"verdict":"same","caseId":"C-cart","rationale":"quantity ignored"}', session_id: 'a1b2', total_cost_usd: 0.0031, usage: { input_tokens: 420, output_tokens: 38 } }) + '\\n');`,
    );
    const a = modelAdapter(
      judgementRouteSchema.parse({ kind: 'claude_code', binary, model: 'claude-sonnet-4-5' }),
    );
    const j = await judgeSameCause(a, q);
    expect(j).toMatchObject({
      route: 'claude_code:claude-sonnet-4-5@claude_code',
      verdict: 'same',
      caseId: 'C-cart',
      fallback: null,
    });
    const rec = JSON.parse(readFileSync(join(dir, 'argv.json'), 'utf8')) as {
      argv: string[];
      stdin: string;
    };
    expect(rec.argv).toEqual([
      '-p',
      '--model',
      'claude-sonnet-4-5',
      '--output-format',
      'json',
      '--permission-mode',
      'plan',
    ]);
    expect(rec.stdin).toBe(sameCausePrompt(q));
  });

  it('Claude Code reporting is_error falls back', async () => {
    const { binary } = fakeCli(
      'claude',
      `process.stdout.write(JSON.stringify({ type: 'result', subtype: 'error_during_execution', is_error: true, result: 'Credit balance is too low' }));`,
    );
    const a = modelAdapter(
      judgementRouteSchema.parse({ kind: 'claude_code', binary, model: 'claude-sonnet-4-5' }),
    );
    const j = await judgeSameCause(a, q);
    expect(j.fallback).toMatchObject({ reason: 'error' });
    expect(j.fallback?.detail).toMatch(/Credit balance/);
  });

  it('Codex: exec --json JSONL events, the last agent_message is the answer (current and older formats)', async () => {
    const { binary, dir } = fakeCli(
      'codex',
      `for (const e of [
        { type: 'thread.started', thread_id: '0199-aa' },
        { type: 'turn.started' },
        { type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: '**Comparing totals**' } },
        { type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: '{"verdict":"different","caseId":null,"rationale":"login is another area"}' } },
        { type: 'turn.completed', usage: { input_tokens: 900, cached_input_tokens: 0, output_tokens: 40 } },
      ]) process.stdout.write(JSON.stringify(e) + '\\n');`,
    );
    const a = modelAdapter(judgementRouteSchema.parse({ kind: 'codex', binary, model: 'gpt-5-codex' }));
    const j = await judgeSameCause(a, q);
    expect(j).toMatchObject({ verdict: 'different', fallback: null, route: 'codex:gpt-5-codex@codex' });
    const rec = JSON.parse(readFileSync(join(dir, 'argv.json'), 'utf8')) as { argv: string[] };
    expect(rec.argv).toEqual([
      'exec',
      '--json',
      '--model',
      'gpt-5-codex',
      '--sandbox',
      'read-only',
      '--skip-git-repo-check',
      '-',
    ]);

    const old = fakeCli(
      'codex',
      `process.stdout.write(JSON.stringify({ id: '0', msg: { type: 'task_started' } }) + '\\n' + JSON.stringify({ id: '0', msg: { type: 'agent_message', message: '{"verdict":"same","caseId":"C-cart","rationale":"same"}' } }) + '\\n');`,
    );
    const b = modelAdapter(
      judgementRouteSchema.parse({ kind: 'codex', binary: old.binary, model: 'gpt-5-codex' }),
    );
    expect((await judgeSameCause(b, q)).verdict).toBe('same');
  });

  it('a CLI that hangs is killed at the route timeout; a missing binary is an error fallback', async () => {
    const { binary } = fakeCli('codex', `setTimeout(() => {}, 60000);`);
    const a = modelAdapter(
      judgementRouteSchema.parse({ kind: 'codex', binary, model: 'gpt-5-codex', timeoutMs: 300 }),
    );
    expect((await judgeSameCause(a, q)).fallback?.reason).toBe('timeout');
    const missing = modelAdapter(
      judgementRouteSchema.parse({
        kind: 'claude_code',
        binary: '/nonexistent/claude',
        model: 'claude-sonnet-4-5',
      }),
    );
    expect((await judgeSameCause(missing, q)).fallback?.reason).toBe('error');
  });
});
