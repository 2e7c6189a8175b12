import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { RecordedEvent } from '@caseloop/contracts';
import { promptHash, READINESS_ASPECTS } from '@caseloop/identity';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { sanitizeReport } from '@caseloop/privacy';
import { eventually } from '@caseloop/testing';
import { coordinatorConfig, CoordinatorConfig } from '../coordinator.config';
import { CoordinatorModule } from '../coordinator.module';
import { CoordinatorHarness, coordinatorHarness, messageIdOf } from '../testing/coordinator.test-fixture';
import { assessReadiness } from './readiness.rules';

jest.setTimeout(60_000);

/**
 * The readiness judgement port, end to end: a real coordinator on real NATS asks a scripted
 * OpenAI-compatible server (a real local HTTP server), or a fake Claude Code CLI printing what the
 * real one prints, what a case's conversation supplies; the verdict is recorded as ReadinessJudged
 * with the decision it informed, and a route that does not answer leaves the readiness rules'
 * decision, visibly.
 */
const T = {
  vague: 'the notifications thing is weird again',
  // No word the readiness rules know: the rules would ask again; a model reads it.
  germanReply:
    'Seit dem letzten Update kommt jede Benachrichtigung zweimal statt einmal, auf dem Handy. Bildschirmfoto im Anhang, das ganze Team ist genervt. Antwort bitte an jana.weber@example.com',
  complete:
    'Search returns no results for words with accents: searching "Zürich" finds nothing. Expected the Zürich office tasks. Web app in Chrome 120, version 4.3.0. Blocks our support team; screenshot attached.',
  terse: 'Beim Export nach Excel fehlen seit heute alle Umlaute, ärgerlich für die Buchhaltung.',
};
const EMAIL = 'jana.weber@example.com';

const completion = (content: string) =>
  JSON.stringify({
    id: 'cmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  });
const verdict = (supplied: boolean, rationale: string) =>
  JSON.stringify({
    supplied: Object.fromEntries(READINESS_ASPECTS.map((a) => [a, supplied])),
    rationale,
  });

const ofType = <K extends RecordedEvent['type']>(events: RecordedEvent[], type: K) =>
  events.filter((e): e is RecordedEvent<K> => e.type === type);

function routedIn(h: CoordinatorHarness) {
  return (sourceId: string) =>
    eventually(async () => ofType(await h.sourceEvents(sourceId), 'SourceRouted').at(-1)?.data.caseId, {
      timeoutMs: 20_000,
      what: `SourceRouted for ${sourceId}`,
    }) as Promise<string>;
}
function until<T>(h: CoordinatorHarness, caseId: string, what: string, pick: (e: RecordedEvent[]) => T) {
  return eventually(async () => pick(await h.caseEvents(caseId)), {
    timeoutMs: 20_000,
    what,
  }) as Promise<NonNullable<T>>;
}

describe('readiness with a judgement route (scripted OpenAI-compatible server)', () => {
  let h: CoordinatorHarness;
  let svc: RunningService<CoordinatorConfig>;
  let server: Server;
  let answer: (prompt: string, res: ServerResponse) => void = (_p, res) => res.writeHead(500).end();
  const seen: Array<{ prompt: string; format: unknown }> = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        if (req.url !== '/v1/chat/completions' || req.method !== 'POST') return void res.writeHead(404).end();
        const body = JSON.parse(raw) as { messages: Array<{ content: string }>; response_format: unknown };
        const prompt = body.messages[0]?.content ?? '';
        seen.push({ prompt, format: body.response_format });
        answer(prompt, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    h = await coordinatorHarness();
    const routeFile = join(h.dir, 'readiness.yaml');
    writeFileSync(
      routeFile,
      ['kind: openai', 'name: local', `baseUrl: ${baseUrl}`, 'model: judge-1', 'timeoutMs: 1500', ''].join(
        '\n',
      ),
    );
    svc = await bootstrapService({
      name: 'coordinator',
      config: coordinatorConfig,
      module: (c) => CoordinatorModule.forRoot(c),
      env: { ...h.env, COORDINATOR_READINESS_JUDGEMENT_FILE: routeFile },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await h?.cleanup();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  it('a reply the rules do not understand is understood through the route, recorded, and the case proceeds', async () => {
    // The rules alone would still miss what happens and what was expected after the reply.
    const offline = assessReadiness({
      texts: [T.vague, T.germanReply].map((t) => sanitizeReport(t).brief),
      attachments: 1,
      keptRatio: 0.9,
      route: { channelId: '1', repository: 'tandem-web', owner: 'web-team' },
      repositories: [{ id: 'tandem-web', owner: 'web-team' }],
      regression: false,
    });
    expect(offline.missing).toEqual(expect.arrayContaining(['expected', 'actual']));

    answer = (prompt, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          completion(
            prompt.includes('Follow-up 1')
              ? verdict(
                  true,
                  'The reply says notifications arrive twice instead of once, on the phone, with a screenshot.',
                )
              : verdict(false, 'Only a vague remark.'),
          ),
        );
    const caseId = await routedIn(h)((await h.report(1, T.vague)).data.sourceId);
    const question = await until(h, caseId, 'a question', (e) => ofType(e, 'ClarificationRequested')[0]);
    expect(question.data.missing).toEqual(['environment', 'expected', 'actual', 'impact', 'evidence']);
    expect(seen).toHaveLength(1);

    await h.report(2, T.germanReply, {
      threadId: messageIdOf(1),
      attachments: ['notifications-twice.png'],
    });
    const task = await until(h, caseId, 'the task', (e) => ofType(e, 'TaskAssigned')[0]);
    expect(task.data.repository).toBe('tandem-web');
    const events = await h.caseEvents(caseId);
    expect(ofType(events, 'ClarificationRequested')).toHaveLength(1);
    const judged = ofType(events, 'ReadinessJudged');
    expect(judged).toHaveLength(2);
    expect(seen).toHaveLength(2);
    const call = seen[1]!;
    // Only the sanitized brief and the attachment names left the coordinator.
    expect(call.prompt).toContain('Follow-up 1:\nSeit dem letzten Update');
    expect(call.prompt).toContain('ATTACHMENTS: notifications-twice.png');
    expect(call.prompt).toContain('[redacted:email]');
    expect(call.prompt).not.toContain(EMAIL);
    expect(call.format).toMatchObject({ type: 'json_schema', json_schema: { name: 'readiness_verdict' } });
    expect(judged[1]!.data).toEqual({
      route: 'openai:judge-1@local',
      promptHash: promptHash(call.prompt),
      supplied: [...READINESS_ASPECTS],
      missing: [],
      rationale:
        'The reply says notifications arrive twice instead of once, on the phone, with a screenshot.',
      fallback: null,
      durationMs: expect.any(Number),
    });
    expect(judged[0]!.data).toMatchObject({
      supplied: [],
      fallback: null,
      promptHash: promptHash(seen[0]!.prompt),
    });
    // The judgement is recorded with the decision it informed, in the same append.
    const confirmed = ofType(events, 'ReadinessConfirmed')[0]!;
    expect(confirmed.commandId).toBe(judged[1]!.commandId);
    expect(confirmed.seq).toBeGreaterThan(judged[1]!.seq);
  });

  it('a route that does not answer in time leaves the rules’ decision, with the fallback recorded, and the metric counts each outcome', async () => {
    answer = () => undefined; // never answers
    const before = seen.length;
    const caseId = await routedIn(h)((await h.report(3, T.complete)).data.sourceId);
    await until(h, caseId, 'the task', (e) => ofType(e, 'TaskAssigned')[0]);
    expect(seen.length).toBe(before + 1);
    const events = await h.caseEvents(caseId);
    const judged = ofType(events, 'ReadinessJudged');
    expect(judged).toHaveLength(1);
    expect(judged[0]!.data).toMatchObject({
      route: 'openai:judge-1@local',
      supplied: [],
      missing: [],
      fallback: { reason: 'timeout' },
    });
    expect(judged[0]!.data.durationMs).toBeGreaterThanOrEqual(1400);
    expect(ofType(events, 'ReadinessConfirmed')).toHaveLength(1);

    // The route fails outright on the next case: the rules ask their own question.
    answer = (_p, res) => res.writeHead(503).end('overloaded');
    const terse = await routedIn(h)((await h.report(4, T.terse)).data.sourceId);
    const q = await until(h, terse, 'a question', (e) => ofType(e, 'ClarificationRequested')[0]);
    expect(ofType(await h.caseEvents(terse), 'ReadinessJudged')[0]?.data.fallback).toMatchObject({
      reason: 'error',
      detail: expect.stringContaining('503'),
    });
    expect(q.data.missing.length).toBeGreaterThan(0);

    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(
      /caseloop_readiness_judgements_total\{route="openai:judge-1@local",outcome="judged"[^}]*\} 2/,
    );
    expect(metrics).toMatch(/caseloop_readiness_judgements_total\{[^}]*outcome="timeout"[^}]*\} 1/);
    expect(metrics).toMatch(/caseloop_readiness_judgements_total\{[^}]*outcome="error"[^}]*\} 1/);
  });
});

describe('readiness with a judgement route (a fake Claude Code CLI)', () => {
  let h: CoordinatorHarness;
  let svc: RunningService<CoordinatorConfig>;
  let binary = '';

  beforeAll(async () => {
    h = await coordinatorHarness();
    binary = join(h.dir, 'claude');
    // Prints what `claude -p --output-format json` prints; records its argv and stdin.
    writeFileSync(
      binary,
      `#!/usr/bin/env node
const fs = require('fs');
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  fs.writeFileSync(${JSON.stringify(join(h.dir, 'argv.json'))}, JSON.stringify({ argv: process.argv.slice(2), stdin: input }));
  const answer = ${JSON.stringify(verdict(true, 'Umlauts vanish from the Excel export since today; accounting is hit.'))};
  process.stdout.write(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, duration_ms: 812, duration_api_ms: 790, num_turns: 1, result: 'Here is my assessment:\\n' + answer, session_id: 'a1b2', total_cost_usd: 0.0031, usage: { input_tokens: 420, output_tokens: 38 } }) + '\\n');
});
`,
    );
    chmodSync(binary, 0o755);
    const routeFile = join(h.dir, 'readiness.yaml');
    writeFileSync(
      routeFile,
      ['kind: claude_code', `binary: ${binary}`, 'model: claude-sonnet-4-5', 'timeoutMs: 10000', ''].join(
        '\n',
      ),
    );
    svc = await bootstrapService({
      name: 'coordinator',
      config: coordinatorConfig,
      module: (c) => CoordinatorModule.forRoot(c),
      env: { ...h.env, COORDINATOR_READINESS_JUDGEMENT_FILE: routeFile },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await h?.cleanup();
  });

  it('a terse report the rules would question goes straight to work on the CLI’s verdict', async () => {
    const caseId = await routedIn(h)((await h.report(1, T.terse)).data.sourceId);
    await until(h, caseId, 'the task', (e) => ofType(e, 'TaskAssigned')[0]);
    const events = await h.caseEvents(caseId);
    expect(ofType(events, 'ClarificationRequested')).toHaveLength(0);
    const rec = JSON.parse(readFileSync(join(h.dir, 'argv.json'), 'utf8')) as {
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
    expect(rec.stdin).toContain(`Report:\n${T.terse}`);
    expect(ofType(events, 'ReadinessJudged')[0]?.data).toMatchObject({
      route: 'claude_code:claude-sonnet-4-5@claude_code',
      promptHash: promptHash(rec.stdin),
      supplied: [...READINESS_ASPECTS],
      fallback: null,
    });
  });
});
