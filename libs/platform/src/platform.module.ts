import { LedgerModule } from '@caseloop/ledger';
import { ServiceId } from '@caseloop/contracts';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { PlatformConfig } from './config';
import { HealthController } from './health.controller';
import { SERVICE_INSTANCE, ServiceHealth } from './service-health';

export const SERVICE_CONFIG = 'SERVICE_CONFIG';
export const SERVICE_NAME = 'SERVICE_NAME';
export const PINO_LOGGER = 'PINO_LOGGER';

export interface PlatformModuleOptions {
  name: ServiceId;
  config: PlatformConfig & Record<string, unknown>;
  logger: Logger;
}

/** What every service gets: its parsed config, logger, metrics registry, ledger, health and metrics endpoints. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(o: PlatformModuleOptions): DynamicModule {
    const c = o.config;
    return {
      module: PlatformModule,
      imports: [
        LedgerModule.forRoot({
          name: o.name,
          // Several servers of one cluster, comma-separated: the client fails over between them.
          servers: c.NATS_URL.split(',').map((u) => u.trim()),
          namespace: c.CASELOOP_NAMESPACE,
          stream: c.LEDGER_STREAM,
          ...(c.NATS_USER !== undefined ? { user: c.NATS_USER } : {}),
          ...(c.NATS_PASSWORD !== undefined ? { pass: c.NATS_PASSWORD } : {}),
          provision: c.LEDGER_PROVISION,
        }),
      ],
      controllers: [HealthController],
      providers: [
        { provide: SERVICE_CONFIG, useValue: c },
        { provide: SERVICE_NAME, useValue: o.name },
        { provide: SERVICE_INSTANCE, useValue: c.CASELOOP_INSTANCE_ID ?? null },
        { provide: PINO_LOGGER, useValue: o.logger },
        {
          // One registry per service instance: tests boot several services in one process.
          provide: Registry,
          useFactory: () => {
            const registry = new Registry();
            registry.setDefaultLabels({ service: o.name });
            collectDefaultMetrics({ register: registry });
            return registry;
          },
        },
        ServiceHealth,
      ],
      exports: [SERVICE_CONFIG, SERVICE_NAME, PINO_LOGGER, Registry, ServiceHealth],
    };
  }
}
