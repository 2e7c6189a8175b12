import { Ledger } from '@caseloop/ledger';
import { PINO_LOGGER } from '@caseloop/platform';
import { BeforeApplicationShutdown, DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import { Logger } from 'pino';
import { Registry } from 'prom-client';
import { loadBindingFile } from './binding/binding.loader';
import { readTokenFile } from './binding/token-file';
import { IntakeConfig } from './intake.config';
import { IntakeConsumer } from './intake/intake.consumer';
import { IntakeRuntime } from './intake/intake.runtime';
import { DiscordHealthController } from './ops/discord-health.controller';
import { IntakeMetrics } from './ops/intake.metrics';

export const INTAKE_CONFIG = Symbol('INTAKE_CONFIG');

/** Closes Discord before the platform closes NATS: the running delivery finishes first. */
@Injectable()
class IntakeLifecycle implements BeforeApplicationShutdown {
  constructor(@Inject(IntakeRuntime) private readonly intake: IntakeRuntime) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.intake.stop();
  }
}

/** Composition root of the intake service; the ledger, health and metrics come from the platform. */
@Module({})
export class IntakeModule {
  static forRoot(config: IntakeConfig): DynamicModule {
    return {
      module: IntakeModule,
      controllers: [IntakeConsumer, DiscordHealthController],
      providers: [
        { provide: INTAKE_CONFIG, useValue: config },
        {
          provide: IntakeMetrics,
          useFactory: (registry: Registry) => new IntakeMetrics(registry),
          inject: [Registry],
        },
        {
          provide: IntakeRuntime,
          inject: [Ledger, PINO_LOGGER, IntakeMetrics],
          useFactory: async (
            ledger: Ledger,
            logger: Logger,
            metrics: IntakeMetrics,
          ): Promise<IntakeRuntime> =>
            IntakeRuntime.start({
              ledger,
              binding: await loadBindingFile(config.INTAKE_BINDING_FILE),
              token: await readTokenFile(config.INTAKE_DISCORD_TOKEN_FILE),
              apiUrl: config.INTAKE_DISCORD_API_URL ?? null,
              dedupeWindowMs: config.INTAKE_DEDUPE_WINDOW_MS,
              deltaBackfillMs: config.INTAKE_DELTA_BACKFILL_MS,
              deltaPageSize: config.INTAKE_DELTA_PAGE_SIZE,
              readyTimeoutMs: config.INTAKE_READY_TIMEOUT_MS,
              reconcileFetchLimit: config.INTAKE_RECONCILE_FETCH_LIMIT,
              fastIdentify: config.INTAKE_FAST_IDENTIFY,
              restGlobalRps: config.INTAKE_REST_GLOBAL_RPS,
              deltaOnStart: true,
              registerCommands: config.INTAKE_REGISTER_COMMANDS,
              ...(config.INTAKE_PRIVATE_MARKERS
                ? {
                    privateMarkers: config.INTAKE_PRIVATE_MARKERS.split(',')
                      .map((w) => w.trim())
                      .filter(Boolean),
                  }
                : {}),
              log: logger.child({ component: 'intake' }),
              metrics,
            }),
        },
        IntakeLifecycle,
      ],
      exports: [INTAKE_CONFIG],
    };
  }
}
