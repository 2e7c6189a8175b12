import { Ledger } from '@caseloop/ledger';
import { PINO_LOGGER } from '@caseloop/platform';
import { ProjectionHost, RunnerStatus } from '@caseloop/projections';
import { Inject, Injectable, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';

/**
 * Keeps the Postgres read models following the ledger: one live runner per projection (migrations
 * first). The monitor hosts them because it is the one service that reads them; a second replica's
 * runners are fenced and wait on standby, and every runner stops (releasing its lock) on shutdown.
 */
@Injectable()
export class ProjectionHostLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private host: ProjectionHost | null = null;

  constructor(
    private readonly ledger: Ledger,
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(PINO_LOGGER) private readonly log: Logger,
    private readonly registry: Registry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.host = await ProjectionHost.start({
      dataSource: this.ds,
      nc: this.ledger.nc,
      stream: this.ledger.stream,
      registry: this.registry,
      log: ({ level, msg, ...rest }) => {
        const fn =
          level === 'error'
            ? this.log.error.bind(this.log)
            : level === 'warn'
              ? this.log.warn.bind(this.log)
              : this.log.info.bind(this.log);
        fn(rest, String(msg ?? 'projection'));
      },
    });
  }

  status(): RunnerStatus[] {
    return this.host?.status() ?? [];
  }

  /** Before the data source closes (its own shutdown hook), so the batch in flight commits. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.host?.stop();
    this.host = null;
  }
}
