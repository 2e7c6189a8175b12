import { DataSource } from 'typeorm';
import { ProjectionEpoch1764720000000 } from './migrations/1764720000000-projection-epoch';
import { ProjectionRuntime1764460800000 } from './migrations/1764460800000-projection-runtime';
import { ProjectionCaseView1796256000000 } from './migrations/1796256000000-projection-case-view';
import { ident } from './table-spec';

export interface ProjectionDbOptions {
  /** `postgres://user@host:port/db`; a password inside it is never logged. */
  url: string;
  /** Everything caseloop owns lives in this schema (tests use their own). */
  schema: string;
  applicationName?: string;
  poolSize?: number;
}

/** The committed migrations, in order. `synchronize` is never used: the schema is what these say. */
export const PROJECTION_MIGRATIONS = [
  ProjectionRuntime1764460800000,
  ProjectionEpoch1764720000000,
  ProjectionCaseView1796256000000,
];

export function createProjectionDataSource(opts: ProjectionDbOptions): DataSource {
  ident(opts.schema);
  return new DataSource({
    type: 'postgres',
    url: opts.url,
    schema: opts.schema,
    applicationName: opts.applicationName ?? 'caseloop',
    poolSize: opts.poolSize ?? 4,
    synchronize: false,
    migrationsRun: false,
    migrations: PROJECTION_MIGRATIONS,
    migrationsTableName: 'caseloop_migrations',
    migrationsTransactionMode: 'each',
    entities: [],
    logging: false,
  });
}

/** Creates the schema if needed and runs pending migrations. Returns the names applied. */
export async function migrateProjections(ds: DataSource): Promise<string[]> {
  const schema = schemaOf(ds);
  await ds.query(`create schema if not exists ${ident(schema)}`);
  const applied = await ds.runMigrations({ transaction: 'each' });
  return applied.map((m) => m.name);
}

export function schemaOf(ds: DataSource): string {
  const schema = (ds.options as { schema?: string }).schema;
  if (!schema) throw new Error('the projection data source has no schema');
  return schema;
}
