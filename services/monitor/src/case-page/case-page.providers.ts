import { Ledger } from '@caseloop/ledger';
import { PINO_LOGGER } from '@caseloop/platform';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown, Provider } from '@nestjs/common';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { casePageSettings, CasePageSettings } from './case-page.config';
import { CasePageReader } from './case-page.reader';
import { CasePageServer } from './case-page.server';
import { CasePageService } from './case-page.service';

export const CASE_PAGE_SETTINGS = Symbol('CASE_PAGE_SETTINGS');

/** Starts the page's listener after the app is up and closes it on shutdown; does nothing when the page is off. */
@Injectable()
export class CasePageHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: CasePageServer | null = null;

  constructor(
    @Inject(CASE_PAGE_SETTINGS) private readonly settings: CasePageSettings | null,
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject(PINO_LOGGER) private readonly log: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings) return;
    const schema = (this.ds.options as { schema?: string }).schema ?? 'public';
    const reader = new CasePageReader(this.ds, schema, this.ledger);
    this.server = new CasePageServer(
      this.settings,
      new CasePageService(reader, this.settings.evidenceBaseUrl),
      this.log,
    );
    await this.server.start();
  }

  /** Where the page is served (null when off). */
  url(): string | null {
    return this.server?.url() ?? null;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.stop();
    this.server = null;
  }
}

/** The case page's providers for the monitor's composition root (which owns the DataSource). */
export function casePageProviders(config: Parameters<typeof casePageSettings>[0]): Provider[] {
  return [{ provide: CASE_PAGE_SETTINGS, useValue: casePageSettings(config) }, CasePageHost];
}
