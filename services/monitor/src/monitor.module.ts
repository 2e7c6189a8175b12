import { createProjectionDataSource } from '@caseloop/projections';
import { PINO_LOGGER } from '@caseloop/platform';
import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DEFAULT_POLICY, MonitorPolicy } from './findings/findings.rules';
import { LiveCasesReader } from './heartbeat/live-cases.reader';
import { ProjectionDeadLettersReader } from './heartbeat/projection-dead-letters.reader';
import {
  HEARTBEAT_OPTIONS,
  HeartbeatOptions,
  MONITOR_LOGGER,
  MonitorHeartbeat,
} from './heartbeat/monitor.heartbeat';
import { MonitorConfig } from './monitor.config';
import { ProjectionHostLifecycle } from './projections/projection-host.lifecycle';

export const MONITOR_CONFIG = Symbol('MONITOR_CONFIG');

export function policyFrom(c: MonitorConfig): MonitorPolicy {
  return {
    stepBudgetMs: {
      ...DEFAULT_POLICY.stepBudgetMs,
      received: c.MONITOR_BUDGET_TRIAGE_MS,
      triage: c.MONITOR_BUDGET_TRIAGE_MS,
      actionable: c.MONITOR_BUDGET_TRIAGE_MS,
      in_progress: c.MONITOR_BUDGET_IN_PROGRESS_MS,
      validating: c.MONITOR_BUDGET_VALIDATING_MS,
      pr_ready: c.MONITOR_BUDGET_GATE_MS,
      implemented_client_blocked: c.MONITOR_BUDGET_GATE_MS,
      stale: c.MONITOR_BUDGET_GATE_MS,
      revision_requested: c.MONITOR_BUDGET_GATE_MS,
    },
    deliveryStuckMs: c.MONITOR_DELIVERY_STUCK_MS,
  };
}

class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}
  async onApplicationShutdown(): Promise<void> {
    if (this.ds.isInitialized) await this.ds.destroy();
  }
}

/**
 * Composition root of the monitor service: the live projection runners it hosts, and the heartbeat
 * over the live set; it appends only its own events. The case pages are the console's.
 */
@Module({})
export class MonitorModule {
  static forRoot(config: MonitorConfig): DynamicModule {
    const options: HeartbeatOptions = {
      intervalMs: config.MONITOR_HEARTBEAT_MS,
      policy: policyFrom(config),
      candidateWindowMs: config.MONITOR_CANDIDATE_WINDOW_MS,
      candidateMinCases: config.MONITOR_CANDIDATE_MIN_CASES,
    };
    return {
      module: MonitorModule,
      providers: [
        { provide: MONITOR_CONFIG, useValue: config },
        { provide: HEARTBEAT_OPTIONS, useValue: options },
        { provide: MONITOR_LOGGER, useExisting: PINO_LOGGER },
        {
          provide: DataSource,
          useFactory: async () =>
            createProjectionDataSource({
              url: config.CASELOOP_DATABASE_URL,
              schema: config.CASELOOP_DB_SCHEMA,
              applicationName: 'caseloop-monitor',
              // The heartbeat and one live runner per projection.
              poolSize: 4,
            }).initialize(),
        },
        DataSourceCloser,
        ProjectionHostLifecycle,
        {
          provide: LiveCasesReader,
          useFactory: (ds: DataSource) => new LiveCasesReader(ds, config.CASELOOP_DB_SCHEMA),
          inject: [DataSource],
        },
        {
          provide: ProjectionDeadLettersReader,
          useFactory: (ds: DataSource) => new ProjectionDeadLettersReader(ds, config.CASELOOP_DB_SCHEMA),
          inject: [DataSource],
        },
        MonitorHeartbeat,
      ],
      exports: [MONITOR_CONFIG, MonitorHeartbeat],
    };
  }
}
