import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `epoch` counts the writes to a projection version that do not come from its runner (a dead letter
 * re-driven by `caseloop dead-letters --redrive`). A runner remembers the epoch it folded from; when
 * it finds the epoch moved, it drops what it remembers and reads the rows again before writing.
 */
export class ProjectionEpoch1764720000000 implements MigrationInterface {
  name = 'ProjectionEpoch1764720000000';

  async up(q: QueryRunner): Promise<void> {
    const s = `"${(q.connection.options as { schema: string }).schema}"`;
    await q.query(`alter table ${s}.projection_checkpoints add column epoch bigint not null default 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    const s = `"${(q.connection.options as { schema: string }).schema}"`;
    await q.query(`alter table ${s}.projection_checkpoints drop column epoch`);
  }
}
