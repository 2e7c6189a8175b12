import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { draft } from '@caseloop/contracts';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { eventually, NATS_URL } from '@caseloop/testing';
import { stringify } from 'yaml';
import { IntakeHarness } from '../test/intake.fixture';
import { IntakeConfig, intakeConfig } from './intake.config';
import { IntakeModule } from './intake.module';

jest.setTimeout(120_000);

describe('the intake service (Nest, JetStream transport, HTTP) against the local Discord', () => {
  let h: IntakeHarness;
  let svc: RunningService<IntakeConfig>;

  beforeAll(async () => {
    h = await IntakeHarness.create();
    const bindingPath = join(h.dir, 'binding.yaml');
    writeFileSync(bindingPath, stringify(h.binding));
    svc = await bootstrapService({
      name: 'intake',
      config: intakeConfig,
      module: (config) => IntakeModule.forRoot(config),
      env: {
        CASELOOP_NAMESPACE: h.namespace,
        LEDGER_STREAM: h.stream,
        NATS_URL,
        HTTP_PORT: '0',
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        CONSUMER_NAME: `intake_${h.namespace}`,
        INTAKE_BINDING_FILE: bindingPath,
        INTAKE_DISCORD_TOKEN_FILE: h.tokenPath,
        INTAKE_DISCORD_API_URL: h.discord.apiUrl,
        INTAKE_FAST_IDENTIFY: 'true',
      },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await h?.cleanup();
  });

  it('serves health for NATS, the consumer and the gateway, and Prometheus metrics', async () => {
    await eventually(async () => (await fetch(`${svc.url}/healthz`)).status === 200, { what: 'healthz' });
    const discord = await fetch(`${svc.url}/healthz/discord`);
    expect(discord.status).toBe(200);
    expect(await discord.json()).toEqual({ gateway: 'ready', botId: h.discord.botId });
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    for (const name of [
      'caseloop_intake_messages_in_total',
      'caseloop_intake_dropped_total',
      'caseloop_intake_delivered_total',
      'caseloop_intake_refused_total',
      'caseloop_intake_gateway_reconnects_total',
    ]) {
      expect(metrics).toContain(`# TYPE ${name} counter`);
    }
  });

  it('records a report, posts a requested delivery from the ledger, and fetches the delta on a clock tick', async () => {
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'the basket badge shows 0',
    });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, {
      what: 'recorded',
      timeoutMs: 20_000,
    });
    await h.requestDelivery({
      caseId: 'C01SERVICE',
      deliveryId: 'D01SVC',
      message: m,
      content: 'Thanks, recorded as a case.',
    });
    await eventually(
      () =>
        h.discord
          .messages(m.id)
          .some((x) => x.author.id === h.discord.botId && x.content === 'Thanks, recorded as a case.'),
      { what: 'delivered', timeoutMs: 30_000 },
    );
    await eventually(
      async () => (await h.caseEvents('C01SERVICE')).some((e) => e.type === 'DeliveryConfirmed'),
      { what: 'confirmed' },
    );

    await svc.ledger.store.append({
      aggregate: 'ops',
      aggregateId: 'clock',
      producer: 'coordinator',
      commandId: 'tick-1',
      causationId: null,
      correlationId: 'tick-1',
      occurredAt: new Date().toISOString(),
      events: [
        draft('ClockTicked', { tickId: 'tick-1', at: new Date().toISOString(), deltaRequestId: 'delta-1' }),
      ],
    });
    await eventually(
      async () => (await h.events()).some((e) => e.type === 'DeltaFetched' && e.data.requestId === 'delta-1'),
      { what: 'delta on tick', timeoutMs: 30_000 },
    );
  });
});
