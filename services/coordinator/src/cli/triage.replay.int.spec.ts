import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliIo, run } from '@caseloop/cli';
import { READINESS_ASPECTS } from '@caseloop/identity';
import { registerTriageCommands } from './triage.commands';

/**
 * `caseloop triage replay --route`: a channel's conversations through a readiness judgement route
 * (a scripted OpenAI-compatible server), and `--judgements`: the recorded verdicts of that output
 * applied again without calling the model.
 */
const HISTORY = [
  { id: 'r1', text: 'the notifications thing is weird again', created: '2026-11-01T10:00:00Z' },
  {
    id: 'r1a',
    replyTo: 'r1',
    text: 'Seit dem Update kommt jede Benachrichtigung zweimal statt einmal. Schreib an jana.weber@example.com',
    created: '2026-11-01T10:05:00Z',
  },
];

describe('caseloop triage replay with a readiness route', () => {
  let server: Server;
  let dir = '';
  const prompts: string[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        const prompt =
          (JSON.parse(raw) as { messages: Array<{ content: string }> }).messages[0]?.content ?? '';
        prompts.push(prompt);
        const supplied = prompt.includes('Follow-up 1');
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            choices: [
              {
                message: {
                  content: JSON.stringify({
                    supplied: Object.fromEntries(READINESS_ASPECTS.map((a) => [a, supplied])),
                    rationale: supplied ? 'the reply says it all' : 'vague',
                  }),
                },
              },
            ],
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    dir = mkdtempSync(join(tmpdir(), 'triage-replay-'));
    writeFileSync(join(dir, 'history.jsonl'), HISTORY.map((m) => JSON.stringify(m)).join('\n') + '\n');
    writeFileSync(
      join(dir, 'route.yaml'),
      `kind: openai\nbaseUrl: http://127.0.0.1:${(server.address() as AddressInfo).port}/v1\nmodel: judge-1\ntimeoutMs: 5000\n`,
    );
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const replay = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false };
    const code = await run(['triage', 'replay', join(dir, 'history.jsonl'), ...args], io, {}, [
      registerTriageCommands,
    ]);
    return { code, lines: out.map((l) => JSON.parse(l) as Record<string, unknown>), err: err.join('\n') };
  };

  it('asks the route per message, sanitized, and its verdict decides; recorded verdicts replay without it', async () => {
    const offline = await replay();
    expect(offline.code).toBe(0);
    expect(offline.lines[1]).toMatchObject({ step: 'ask' });
    expect(offline.lines[1]).not.toHaveProperty('judgement');

    const judged = await replay('--route', join(dir, 'route.yaml'));
    expect(judged.code).toBe(0);
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toContain('[redacted:email]');
    expect(prompts[1]).not.toContain('jana.weber@example.com');
    expect(judged.lines[0]).toMatchObject({ step: 'ask', judgement: { route: 'openai:judge-1@openai' } });
    expect(judged.lines[1]).toMatchObject({
      message: 'r1a',
      missing: [],
      step: 'wait',
      judgement: { supplied: [...READINESS_ASPECTS], fallback: null },
    });
    expect(judged.err).toContain('1 ready after their thread');

    const file = join(dir, 'judged.jsonl');
    writeFileSync(file, judged.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const again = await replay('--judgements', file);
    expect(prompts).toHaveLength(2);
    expect(again.lines).toEqual(judged.lines);
  });
});
