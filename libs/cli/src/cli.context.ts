import { connectLedger, Ledger } from '@caseloop/ledger';
import { createProjectionDataSource, migrateProjections } from '@caseloop/projections';
import { DataSource } from 'typeorm';
import { CliConfig, displayUrl } from './cli.config';
import { CliError } from './cli.errors';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  readonly isTTY: boolean;
}

export const processIo = (): CliIo => ({
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  isTTY: Boolean(process.stdout.isTTY),
});

/**
 * What a command needs, opened on first use and closed once at the end: the ledger (NATS) and
 * the projection database. Commands never open connections themselves.
 */
export class CliContext {
  private ledgerConn: Ledger | null = null;
  private db: DataSource | null = null;

  constructor(
    readonly config: CliConfig,
    readonly io: CliIo,
  ) {}

  async ledger(): Promise<Ledger> {
    if (!this.ledgerConn) {
      try {
        this.ledgerConn = await connectLedger({
          servers: this.config.CASELOOP_NATS_URL.split(',').map((u) => u.trim()),
          namespace: this.config.CASELOOP_NAMESPACE,
          stream: this.config.CASELOOP_STREAM,
          name: 'cli',
          ...(this.config.CASELOOP_NATS_USER ? { user: this.config.CASELOOP_NATS_USER } : {}),
          ...(this.config.CASELOOP_NATS_PASSWORD ? { pass: this.config.CASELOOP_NATS_PASSWORD } : {}),
        });
      } catch (e) {
        throw new CliError(
          `cannot connect to NATS at ${displayUrl(this.config.CASELOOP_NATS_URL)}: ${(e as { code?: string }).code ?? (e as Error).message}`,
        );
      }
    }
    return this.ledgerConn;
  }

  async database({ migrate = false }: { migrate?: boolean } = {}): Promise<DataSource> {
    if (!this.db) {
      const ds = createProjectionDataSource({
        url: this.config.CASELOOP_DATABASE_URL,
        schema: this.config.CASELOOP_DB_SCHEMA,
        applicationName: 'caseloop-cli',
        poolSize: 3,
      });
      try {
        await ds.initialize();
      } catch (e) {
        throw new CliError(
          `cannot connect to Postgres at ${displayUrl(this.config.CASELOOP_DATABASE_URL)}: ${(e as { code?: string }).code ?? (e as Error).message}`,
        );
      }
      this.db = ds;
    }
    if (migrate) await migrateProjections(this.db);
    return this.db;
  }

  async close(): Promise<void> {
    const db = this.db;
    const ledger = this.ledgerConn;
    this.db = null;
    this.ledgerConn = null;
    await Promise.allSettled([db?.destroy(), ledger?.close()]);
  }
}
