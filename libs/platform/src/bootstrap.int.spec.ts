import { RecordedEvent } from '@caseloop/contracts';
import { EventStore, listConsumerDeadLetters, PoisonError } from '@caseloop/ledger';
import { eventually, NATS_URL, uniqueSuffix } from '@caseloop/testing';
import {
  BeforeApplicationShutdown,
  Controller,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { connect } from 'nats';
import { z } from 'zod';
import { bootstrapService, RunningService } from './bootstrap';
import { defineConfig, platformConfigShape, platformSecrets } from './config';

jest.setTimeout(60_000);

const REV = 'b'.repeat(40);

@Controller()
class ProbeReactor {
  static seen: RecordedEvent[] = [];
  constructor(@Inject(EventStore) private readonly store: EventStore) {}

  @EventPattern('LeaseRequested')
  async onRequested(@Payload() e: RecordedEvent): Promise<void> {
    ProbeReactor.seen.push(e);
    if (e.type === 'LeaseRequested' && e.data.taskId === 'Tpoison')
      throw new PoisonError('cannot ever handle this');
    // The injected store is the service's own: a reactor loads, decides (nothing here) and appends.
    await this.store.handle({
      aggregate: 'case',
      aggregateId: e.aggregateId,
      producer: 'coordinator',
      commandId: `react-${e.eventId.replace(':', '-')}`,
      causationId: e.eventId,
      correlationId: e.correlationId,
      occurredAt: e.occurredAt,
      decide: () => [],
    });
  }
}

/** Counts its lifecycle hooks: a provider starts its consumers, watches and timers in them. */
@Injectable()
class HookCounter implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  static calls = { init: 0, bootstrap: 0, shutdown: 0 };
  onModuleInit(): void {
    HookCounter.calls.init += 1;
  }
  onApplicationBootstrap(): void {
    HookCounter.calls.bootstrap += 1;
  }
  beforeApplicationShutdown(): void {
    HookCounter.calls.shutdown += 1;
  }
}

@Module({ controllers: [ProbeReactor], providers: [HookCounter] })
class ProbeModule {}

const probeConfig = defineConfig({
  schema: z.object({ ...platformConfigShape }),
  secrets: [...platformSecrets],
});

describe('bootstrapService', () => {
  const namespace = uniqueSuffix();
  const stream = `T${namespace.toUpperCase()}`;
  let svc: RunningService<z.infer<typeof probeConfig.schema>>;

  beforeAll(async () => {
    svc = await bootstrapService({
      name: 'coordinator',
      config: probeConfig,
      module: () => ProbeModule,
      env: {
        CASELOOP_NAMESPACE: namespace,
        LEDGER_STREAM: stream,
        NATS_URL,
        LEDGER_PROVISION: 'true',
        HTTP_PORT: '0',
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
      },
      transport: { nakBaseMs: 20, nakMaxMs: 50 },
    });
  });
  afterAll(async () => {
    await svc.close();
    expect(HookCounter.calls.shutdown).toBe(1);
    const nc = await connect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    for (const s of [stream, `${stream}_DLQ`]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  });

  it('answers /healthz with NATS state and readiness', async () => {
    const res = await fetch(`${svc.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      service: 'coordinator',
      status: 'ready',
      nats: { state: 'connected', server: expect.stringMatching(/^2\./), jetstream: { stream, namespace } },
      transport: { state: 'consuming', consumer: 'coordinator' },
      cluster: {
        state: 'healthy',
        replicas: 1,
        leader: expect.any(String),
        lagging: [],
        unserialisedChecks: false,
        reconnects: 0,
      },
    });
  });

  it('serves Prometheus metrics from its own registry', async () => {
    const res = await fetch(`${svc.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await res.text();
    expect(body).toContain('caseloop_consumer_ready{service="coordinator"} 1');
    expect(body).toContain('process_cpu_user_seconds_total{service="coordinator"}');
  });

  it('runs each lifecycle hook once, though the service is an HTTP app and a consumer', () => {
    // A second onApplicationBootstrap would start every consumer, watch and timer twice, and
    // close only one of them.
    expect(HookCounter.calls).toEqual({ init: 1, bootstrap: 1, shutdown: 0 });
  });

  it('routes ledger events to @EventPattern handlers and keeps the handler error type (poison → dead letter)', async () => {
    const store = svc.ledger.store;
    const base = {
      aggregate: 'case' as const,
      producer: 'lease' as const,
      causationId: null,
      correlationId: 'c1',
      occurredAt: '2026-11-29T20:00:00.000Z',
    };
    const ev = (taskId: string) =>
      ({
        type: 'LeaseRequested',
        data: { resource: 'browser:default', taskId, revision: REV, requestId: 'R1', position: 0 },
      }) as never;
    const ok = await store.append({
      ...base,
      aggregateId: 'Cboot',
      commandId: 'boot-1',
      events: [ev('Tok')],
    });
    const bad = await store.append({
      ...base,
      aggregateId: 'Cboot2',
      commandId: 'boot-2',
      events: [ev('Tpoison')],
    });
    await eventually(() => ProbeReactor.seen.some((e) => e.seq === ok.seqs[0]));
    // Without the transport's exception filter Nest would turn PoisonError into a generic error and retry it.
    const dl = await eventually(async () =>
      (await listConsumerDeadLetters(svc.ledger.jsm, stream)).find((d) => d.source === 'record'),
    );
    expect(dl).toMatchObject({ streamSeq: bad.seqs[0], code: 'poison', consumer: 'coordinator' });
    expect(ProbeReactor.seen.filter((e) => e.seq === bad.seqs[0])).toHaveLength(1);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(
      /caseloop_events_handled_seconds_count\{[^}]*type="LeaseRequested"[^}]*outcome="acked"[^}]*\} 1/,
    );
    expect(metrics).toMatch(/caseloop_events_handled_seconds_count\{[^}]*outcome="dead_lettered"[^}]*\} 1/);
    expect(metrics).toContain('caseloop_dead_letters_total{service="coordinator"} 1');
    // The store the service and this test share is instrumented too.
    expect(metrics).toMatch(
      /caseloop_ledger_appended_events_total\{duplicate="false",service="coordinator"\} 2/,
    );
    expect(metrics).toMatch(/caseloop_ledger_load_seconds_count\{service="coordinator"\} [1-9]/);
    await expect(
      store.append({
        ...base,
        aggregateId: 'Cboot',
        commandId: 'boot-3',
        events: [ev('Tok')],
        expectedSeq: 0,
      }),
    ).rejects.toThrow();
    expect(await (await fetch(`${svc.url}/metrics`)).text()).toContain(
      'caseloop_ledger_conflicts_total{service="coordinator"} 1',
    );
  });
});
