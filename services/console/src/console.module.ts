import { Ledger } from '@caseloop/ledger';
import { createProjectionDataSource } from '@caseloop/projections';
import {
  DynamicModule,
  Inject,
  MiddlewareConsumer,
  Module,
  NestModule,
  OnApplicationShutdown,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AuthController } from './auth/auth.controller';
import { ConsoleAuth } from './auth/console-auth';
import { loadConsoleAccess } from './auth/console-access';
import { CasePageReader } from './cases/case-page.reader';
import { CasePageService } from './cases/case-page.service';
import { CasesController, StylesController } from './cases/cases.controller';
import { CONSOLE_SETTINGS, ConsoleConfig, consoleSettings, ConsoleSettings } from './console.config';
import { ConsoleExceptionFilter } from './web/console.filter';
import { ConsoleMiddleware } from './web/console.middleware';

class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}
  async onApplicationShutdown(): Promise<void> {
    if (this.ds.isInitialized) await this.ds.destroy();
  }
}

/**
 * Composition root of the console: the case pages over the case-view projection (read-only),
 * behind sign-in with Discord. It appends nothing and consumes nothing.
 */
@Module({})
export class ConsoleModule implements NestModule {
  static forRoot(config: ConsoleConfig): DynamicModule {
    // Settings and the binding are checked before anything connects: a bad one stops the start.
    const settings = consoleSettings(config);
    const access = settings.signIn ? loadConsoleAccess(settings.signIn.bindingFile) : null;
    return {
      module: ConsoleModule,
      controllers: [StylesController, CasesController, AuthController],
      providers: [
        { provide: CONSOLE_SETTINGS, useValue: settings },
        { provide: ConsoleAuth, useValue: new ConsoleAuth(settings, access) },
        {
          provide: DataSource,
          useFactory: async () =>
            createProjectionDataSource({
              url: config.CASELOOP_DATABASE_URL,
              schema: config.CASELOOP_DB_SCHEMA,
              applicationName: 'caseloop-console',
              poolSize: 4,
            }).initialize(),
        },
        DataSourceCloser,
        {
          provide: CasePageService,
          useFactory: (ds: DataSource, ledger: Ledger, s: ConsoleSettings) =>
            new CasePageService(new CasePageReader(ds, config.CASELOOP_DB_SCHEMA, ledger), s.evidenceBaseUrl),
          inject: [DataSource, Ledger, CONSOLE_SETTINGS],
        },
        { provide: APP_FILTER, useClass: ConsoleExceptionFilter },
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(ConsoleMiddleware).forRoutes('*');
  }
}
