import { writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { RecordedEvent } from '@caseloop/contracts';
import { promptHash } from '@caseloop/identity';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { eventually } from '@caseloop/testing';
import { coordinatorConfig, CoordinatorConfig } from '../coordinator.config';
import { CoordinatorModule } from '../coordinator.module';
import { CoordinatorHarness, coordinatorHarness } from '../testing/coordinator.test-fixture';

jest.setTimeout(60_000);

/**
 * The judgement port wired into routing, end to end: a real coordinator on real NATS asks a scripted
 * OpenAI-compatible server (a real local HTTP server) about reports whose best open case clears the
 * ask floor (judgementAskFloor), records what it answered on the routing, and falls back to the offline decision, visibly, when it fails or times out.
 */
const T = {
  calendar:
    'Google Calendar sync duplicates recurring events: our weekly standup shows up three times on the same day since version 4.2.0. Expected one copy. Everyone on the team is confused; screenshot attached.',
  calendarMedium:
    'After connecting Google our calendar shows some meetings twice, not sure if it is the sync',
  charts:
    'Dashboard charts are blank in Safari 17 on macOS: every widget shows an empty white box since version 4.2.0. Expected the graphs. Our managers cannot read reports; screenshot attached.',
  chartsMedium: 'graphs look empty on my mac sometimes, not sure why',
  export:
    'CSV export of the time report drops every row after 1,000 entries on version 4.2.0. Expected all 1,412 rows. Payroll is blocked; file attached.',
  exportMedium: 'rows go missing in big csv files sometimes',
};
const KEY = 'judge-key-7f3a';

let server: Server;
let baseUrl = '';
let answer: (prompt: string, res: ServerResponse) => void = (_p, res) => res.writeHead(500).end();
const seen: Array<{ prompt: string; auth: string | undefined; model: string }> = [];

const completion = (content: string) =>
  JSON.stringify({
    id: 'cmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  });

describe('routing with a judgement route (scripted OpenAI-compatible server)', () => {
  let h: CoordinatorHarness;
  let svc: RunningService<CoordinatorConfig>;

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        if (req.url !== '/v1/chat/completions' || req.method !== 'POST') return void res.writeHead(404).end();
        const body = JSON.parse(raw) as { model: string; messages: Array<{ content: string }> };
        const prompt = body.messages[0]?.content ?? '';
        seen.push({ prompt, auth: req.headers.authorization, model: body.model });
        answer(prompt, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    h = await coordinatorHarness();
    const keyFile = join(h.dir, 'judge.key');
    writeFileSync(keyFile, `${KEY}\n`);
    const routeFile = join(h.dir, 'judgement.yaml');
    writeFileSync(
      routeFile,
      [
        'kind: openai',
        'name: local',
        `baseUrl: ${baseUrl}`,
        'model: judge-1',
        `apiKeyFile: ${keyFile}`,
        'timeoutMs: 1500',
        '',
      ].join('\n'),
    );
    svc = await bootstrapService({
      name: 'coordinator',
      config: coordinatorConfig,
      module: (c) => CoordinatorModule.forRoot(c),
      env: { ...h.env, COORDINATOR_JUDGEMENT_FILE: routeFile },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await h?.cleanup();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  const routed = (sourceId: string) =>
    eventually(
      async () =>
        (await h.sourceEvents(sourceId))
          .filter((e): e is RecordedEvent<'SourceRouted'> => e.type === 'SourceRouted')
          .at(-1),
      { timeoutMs: 20_000, what: `SourceRouted for ${sourceId}` },
    ) as Promise<RecordedEvent<'SourceRouted'>>;

  it('asks only when an open case clears the ask floor, and a "same" links the report with the judgement on the routing', async () => {
    answer = (_p, res) => res.writeHead(500).end('not expected');
    const base = await routed((await h.report(1, T.calendar)).data.sourceId);
    expect(base.data).toMatchObject({ outcome: 'opened', judgement: null });
    expect(seen).toHaveLength(0); // nothing to ask about: no open case matched

    answer = (prompt, res) => {
      const id = /CANDIDATE (\S+):/.exec(prompt)?.[1] ?? null;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        completion(
          JSON.stringify({
            verdict: 'same',
            caseId: id,
            rationale: 'Both describe calendar sync doubling events.',
          }),
        ),
      );
    };
    const e = await h.report(2, T.calendarMedium);
    const r = await routed(e.data.sourceId);
    expect(r.data).toMatchObject({ outcome: 'linked', caseId: base.data.caseId });
    expect(seen).toHaveLength(1);
    const call = seen[0]!;
    expect(call.auth).toBe(`Bearer ${KEY}`);
    expect(call.model).toBe('judge-1');
    expect(call.prompt).toContain(T.calendarMedium);
    expect(call.prompt).toContain(`CANDIDATE ${base.data.caseId}:`);
    expect(r.data.judgement).toEqual({
      route: 'openai:judge-1@local',
      promptHash: promptHash(call.prompt),
      verdict: 'same',
      caseId: base.data.caseId,
      rationale: 'Both describe calendar sync doubling events.',
      fallback: null,
      durationMs: expect.any(Number),
    });
    expect(r.data.reasons[0]).toMatch(/^model openai:judge-1@local: same/);
    expect(JSON.stringify(r.data)).not.toContain(KEY);
  });

  it('a failing endpoint leaves the offline decision (held for review), recorded as a fallback', async () => {
    const base = await routed((await h.report(3, T.charts)).data.sourceId);
    answer = (_p, res) => res.writeHead(503).end('overloaded');
    const before = seen.length;
    const r = await routed((await h.report(4, T.chartsMedium)).data.sourceId);
    expect(seen.length).toBe(before + 1);
    expect(r.data).toMatchObject({ outcome: 'held', caseId: base.data.caseId });
    expect(r.data.judgement).toMatchObject({
      verdict: 'unsure',
      fallback: { reason: 'error', detail: expect.stringContaining('503') },
    });
    expect(r.data.reasons.join('\n')).toMatch(/model fallback \(error\): offline decision stands/);
  });

  it('a route that does not answer in time falls back to the offline decision, and the metric counts each outcome', async () => {
    const base = await routed((await h.report(5, T.export)).data.sourceId);
    answer = () => undefined; // never answers
    const r = await routed((await h.report(6, T.exportMedium)).data.sourceId);
    expect(r.data).toMatchObject({ outcome: 'held', caseId: base.data.caseId });
    expect(r.data.judgement).toMatchObject({ verdict: 'unsure', fallback: { reason: 'timeout' } });
    expect(r.data.judgement!.durationMs).toBeGreaterThanOrEqual(1400);
    expect(r.data.reasons.join('\n')).toMatch(/model fallback \(timeout\)/);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(
      /caseloop_identity_judgements_total\{route="openai:judge-1@local",verdict="same",fallback="none"[^}]*\} 1/,
    );
    expect(metrics).toMatch(/caseloop_identity_judgements_total\{[^}]*fallback="error"[^}]*\} 1/);
    expect(metrics).toMatch(/caseloop_identity_judgements_total\{[^}]*fallback="timeout"[^}]*\} 1/);
  });
});
