import 'reflect-metadata';
import { isProducer, ServiceId } from '@caseloop/contracts';
import {
  JetStreamExceptionFilter,
  JetStreamServer,
  Ledger,
  StreamReplication,
  unserialisedChecksWarning,
} from '@caseloop/ledger';
import { DynamicModule, INestApplication, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestMicroservice } from '@nestjs/microservices';
import { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, RegistryContentType } from 'prom-client';
import { z } from 'zod';
import { ConfigDefinition, ConfigError, parseConfig, PlatformConfig, redactConfig } from './config';
import { createLogger, PinoNestLogger } from './logger';
import { PlatformModule } from './platform.module';
import { ServiceHealth } from './service-health';

export interface ServiceDefinition<S extends z.ZodObject> {
  name: ServiceId;
  config: ConfigDefinition<S>;
  /** The service's composition root, given its parsed config. */
  module: (config: z.infer<S>) => Type | DynamicModule;
  /** Consume ledger events into `@EventPattern` handlers (default true). */
  consumer?: boolean;
  /** Defaults to process.env; tests pass their own. */
  env?: Record<string, string | undefined>;
  /** Transport timings, for tests. */
  transport?: { nakBaseMs?: number; nakMaxMs?: number; setupRetryMs?: number };
}

export interface RunningService<C> {
  app: INestApplication;
  config: C;
  logger: Logger;
  ledger: Ledger;
  server: JetStreamServer | null;
  /** `http://host:port` actually bound (HTTP_PORT=0 picks a free port). */
  url: string;
  close(): Promise<void>;
}

@Module({})
class ServiceRootModule {}

/**
 * Boots a service as a NestJS hybrid app: HTTP (`/healthz`, `/metrics`) plus the JetStream transport.
 * Config is parsed once here; a ConfigError names keys only.
 */
export async function bootstrapService<S extends z.ZodObject>(
  def: ServiceDefinition<S>,
): Promise<RunningService<z.infer<S>>> {
  const config = parseConfig(def.config, def.env ?? process.env) as z.infer<S> & PlatformConfig;
  const logger = createLogger({ name: def.name, level: config.LOG_LEVEL, secretKeys: def.config.secrets });
  logger.info({ config: redactConfig(config, def.config.secrets) }, 'starting');

  const root: DynamicModule = {
    module: ServiceRootModule,
    imports: [PlatformModule.forRoot({ name: def.name, config, logger }), def.module(config)],
  };
  const app = await NestFactory.create(root, {
    logger: new PinoNestLogger(logger),
    abortOnError: false,
    // Keep-alive sockets must not hold a SIGTERM shutdown open.
    forceCloseConnections: true,
  });
  const ledger = app.get(Ledger);
  const registry = app.get(Registry);
  const health = app.get(ServiceHealth);
  instrumentStore(ledger, registry);
  await instrumentReplication(ledger, registry, logger);

  let server: JetStreamServer | null = null;
  if (def.consumer ?? true) {
    if (!isProducer(def.name)) throw new Error(`${def.name} owns no events and cannot consume as a producer`);
    server = new JetStreamServer({
      ledger,
      producer: def.name,
      durable: config.CONSUMER_NAME ?? def.name,
      maxDeliver: config.CONSUMER_MAX_DELIVER,
      outageHoldMs: config.CONSUMER_OUTAGE_HOLD_MS,
      ackWaitMs: config.CONSUMER_ACK_WAIT_MS,
      concurrency: config.CONSUMER_CONCURRENCY,
      drainTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      ...def.transport,
    });
    instrument(server, registry);
    const s = server;
    health.bindTransport(s.consumerName, s.state, (cb) => s.on('status', cb));
    // Deferred so the filter is in place before the handlers' exception zones are built.
    const ms = app.connectMicroservice({ strategy: server }, { deferInitialization: true });
    ms.useGlobalFilters(new JetStreamExceptionFilter());
    // The lifecycle hooks run once, from app.init(), before anything is consumed. A deferred
    // microservice would run onModuleInit and onApplicationBootstrap again when it starts: every
    // consumer, watch and timer a provider starts in them would run twice, one of each never stopped.
    (ms as unknown as NestMicroservice).setIsInitHookCalled(true);
    await app.init();
    await app.startAllMicroservices();
  }
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  const addr = app.getHttpServer().address() as { port: number } | null;
  const host = config.HTTP_HOST === '0.0.0.0' ? '127.0.0.1' : config.HTTP_HOST;
  const url = `http://${host}:${addr?.port ?? config.HTTP_PORT}`;
  logger.info({ url, nats: ledger.features.version }, 'ready');

  let closing: Promise<void> | null = null;
  return {
    app,
    config,
    logger,
    ledger,
    server,
    url,
    close() {
      closing ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<'timeout'>((r) => {
          timer = setTimeout(() => r('timeout'), config.SHUTDOWN_TIMEOUT_MS + 2_000);
        });
        // app.close(): HTTP closes, the transport drains, then shutdown hooks close the NATS connection.
        const outcome = await Promise.race([app.close().then(() => 'closed' as const), timedOut]);
        clearTimeout(timer);
        if (outcome === 'timeout') throw new Error('shutdown timed out');
        logger.info('stopped');
      })();
      return closing;
    },
  };
}

function instrumentStore(ledger: Ledger, registry: Registry<RegistryContentType>): void {
  const appended = new Counter({
    name: 'caseloop_ledger_appended_events_total',
    help: 'Events this service appended (duplicate="true": a retried command, nothing new written)',
    labelNames: ['duplicate'],
    registers: [registry],
  });
  const conflicts = new Counter({
    name: 'caseloop_ledger_conflicts_total',
    help: 'Appends refused because the subject moved on (wrong last sequence, 10071)',
    registers: [registry],
  });
  const retries = new Counter({
    name: 'caseloop_ledger_publish_retries_total',
    help: 'Publishes sent again with the same message id: no ack in time (timeout) or no stream leader (no_leader)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const raced = new Counter({
    name: 'caseloop_ledger_slot_races_total',
    help: 'Appends that raced another with the same expectation and were refused by the slot id (the server accepted both checks: nats-server #4320)',
    registers: [registry],
  });
  const appendSeconds = new Histogram({
    name: 'caseloop_ledger_append_seconds',
    help: 'Time to append one command (all its events, acknowledged)',
    buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2],
    registers: [registry],
  });
  const loadSeconds = new Histogram({
    name: 'caseloop_ledger_load_seconds',
    help: 'Time to load one aggregate from the stream',
    buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2],
    registers: [registry],
  });
  ledger.store.observe({
    appended: (n, duplicate, ms) => {
      appended.inc({ duplicate: String(duplicate) }, n);
      appendSeconds.observe(ms / 1000);
    },
    conflict: () => conflicts.inc(),
    retried: (reason) => retries.inc({ reason }),
    raced: () => raced.inc(),
    loaded: (_n, ms) => loadSeconds.observe(ms / 1000),
  });
}

/**
 * The stream's replication, read at start and then every few seconds (for /healthz and /metrics).
 * On a replicated stream of a server older than 2.9.21 every service says so at start, naming the
 * version: its concurrency checks are not serialised there (nats-server #4320).
 */
async function instrumentReplication(
  ledger: Ledger,
  registry: Registry<RegistryContentType>,
  logger: Logger,
): Promise<void> {
  const replicas = new Gauge({
    name: 'caseloop_ledger_stream_replicas',
    help: 'Replicas the ledger stream is configured with',
    registers: [registry],
  });
  const current = new Gauge({
    name: 'caseloop_ledger_stream_replicas_current',
    help: 'Replicas of the ledger stream that are caught up (the leader included); below replicas = degraded',
    registers: [registry],
  });
  const leader = new Gauge({
    name: 'caseloop_ledger_stream_leader',
    help: '1 while the ledger stream has a leader; 0 during an election or without a quorum',
    registers: [registry],
  });
  const unserialised = new Gauge({
    name: 'caseloop_ledger_unserialised_checks',
    help: '1 when the server does not serialise expectation checks on this replicated stream (nats-server #4320, < 2.9.21): slot ids guard appends',
    labelNames: ['server'],
    registers: [registry],
  });
  const reconnects = new Gauge({
    name: 'caseloop_nats_reconnects',
    help: 'Reconnections of this service to NATS since it started (a node lost or restarted)',
    registers: [registry],
    collect() {
      this.set(ledger.reconnects);
    },
  });
  void reconnects;
  let warned = false;
  const seen = (r: StreamReplication) => {
    replicas.set(r.replicas);
    current.set(r.leader ? r.current.length + 1 : 0);
    leader.set(r.leader ? 1 : 0);
    unserialised.set({ server: r.server }, r.unserialisedChecks ? 1 : 0);
    if (r.unserialisedChecks && !warned) {
      warned = true;
      logger.warn({ server: r.server, stream: r.stream, replicas: r.replicas }, unserialisedChecksWarning(r));
    }
  };
  ledger.store.observe({ replication: seen });
  const refresh = () => ledger.store.replication().catch(() => null);
  await refresh();
  const timer = setInterval(() => void refresh(), 5_000);
  timer.unref();
  void ledger.nc.closed().then(() => clearInterval(timer));
}

function instrument(server: JetStreamServer, registry: Registry<RegistryContentType>): void {
  const deadLetters = new Counter({
    name: 'caseloop_dead_letters_total',
    help: 'Ledger events this service terminated and dead-lettered',
    registers: [registry],
  });
  const consuming = new Gauge({
    name: 'caseloop_consumer_ready',
    help: '1 while the durable consumer is consuming',
    registers: [registry],
  });
  const handled = new Histogram({
    name: 'caseloop_events_handled_seconds',
    help: 'Ledger events settled by this service: handler duration by event type and outcome',
    labelNames: ['type', 'outcome'],
    buckets: [0.005, 0.025, 0.1, 0.5, 2, 10, 60],
    registers: [registry],
  });
  server.on('dead_letter', () => deadLetters.inc());
  server.on('settled', (type, outcome, ms) => handled.observe({ type, outcome }, ms / 1000));
  server.on('status', (s) => consuming.set(s === 'consuming' ? 1 : 0));
}

/**
 * `main.ts` of every service: boot, and on SIGTERM/SIGINT drain and exit 0. Nest's
 * enableShutdownHooks would re-raise the signal after closing, ending the process with 143;
 * the same hooks run here through app.close().
 */
export function runService<S extends z.ZodObject>(def: ServiceDefinition<S>): void {
  let stopping: ((signal: NodeJS.Signals | 'parent gone') => void) | null = null;
  if (process.env.CASELOOP_EXIT_WITH_PARENT === '1')
    exitWithParent(() => {
      if (stopping) stopping('parent gone');
      else process.exit(1);
    });
  bootstrapService(def).then(
    (svc) => {
      const stop = (signal: NodeJS.Signals | 'parent gone') => {
        stopping = null;
        svc.logger.info({ signal }, 'stopping');
        svc.close().then(
          () => process.exit(0),
          (e: unknown) => {
            svc.logger.error({ err: (e as Error).message }, 'unclean shutdown');
            process.exit(1);
          },
        );
      };
      stopping = stop;
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (e: unknown) => {
      const message = e instanceof ConfigError ? e.message : `failed to start: ${(e as Error).message}`;
      process.stderr.write(`${def.name}: ${message}\n`);
      process.exit(1);
    },
  );
}

/**
 * With CASELOOP_EXIT_WITH_PARENT=1 the process that started this one holds its stdin open: when
 * that pipe closes (the parent exited, even by SIGKILL, which runs nothing on the way out), this
 * service stops as on SIGTERM, and is ended outright if that takes too long. No orphan outlives
 * the stack that started it to disturb the next one.
 */
function exitWithParent(onGone: () => void): void {
  let gone = false;
  const once = () => {
    if (gone) return;
    gone = true;
    setTimeout(() => process.exit(1), 30_000).unref();
    onGone();
  };
  process.stdin.on('end', once);
  process.stdin.on('close', once);
  process.stdin.on('error', once);
  // Read (and drop) whatever comes, so the end of the pipe is seen.
  process.stdin.on('data', () => undefined);
  process.stdin.resume();
}
