import { MigrationInterface, QueryRunner } from 'typeorm';

/** The case read model's name before this migration, and after. */
const CASE_VIEW_FORMER_NAME = 'case-ledger';
const CASE_VIEW_NAME = 'case-view';

/**
 * The case read model was called `case-ledger`, but the ledger is the JetStream stream; the read
 * model is `case-view`. Its rows in the projection runtime (head, versions, checkpoints, dead
 * letters) move to the new name, and so does the shape each version was built with (a shape begins
 * with the projection's name), so a deployment keeps its active version, checkpoint and dead letters
 * instead of rebuilding from zero. The versioned tables and the reader views are named after the
 * projection's tables, not after the projection: they stay as they are.
 *
 * The head and version rows are taken for update first, so a runner of the previous release waits
 * for nothing half-done: its batch in flight commits before the rename, and its next batch finds no
 * version under the old name and stops.
 */
export class ProjectionCaseView1796256000000 implements MigrationInterface {
  name = 'ProjectionCaseView1796256000000';

  async up(q: QueryRunner): Promise<void> {
    await renameProjection(q, CASE_VIEW_FORMER_NAME, CASE_VIEW_NAME);
  }

  async down(q: QueryRunner): Promise<void> {
    await renameProjection(q, CASE_VIEW_NAME, CASE_VIEW_FORMER_NAME);
  }
}

async function renameProjection(q: QueryRunner, from: string, to: string): Promise<void> {
  const s = `"${(q.connection.options as { schema: string }).schema}"`;
  await q.query(`select 1 from ${s}.projection_heads where projection = $1 for update`, [from]);
  const old = await q.query(`select 1 from ${s}.projection_versions where projection = $1 for update`, [
    from,
  ]);
  if (old.length === 0) return;
  const [clash] = await q.query(
    `select exists (select 1 from ${s}.projection_heads where projection = $1)
         or exists (select 1 from ${s}.projection_versions where projection = $1) as taken`,
    [to],
  );
  if (clash?.taken) {
    throw new Error(
      `projection ${from} cannot be renamed ${to}: ${s} already holds versions of both; ` +
        `drop the ${to} rows (or the ${from} ones) and migrate again`,
    );
  }
  // The checkpoints reference their version: the versions move first, under the new name, then the
  // checkpoints follow them and the old version rows go.
  await q.query(
    `insert into ${s}.projection_versions
            (projection, version, status, shape, created_at, caught_up_at, activated_at, retired_at)
     select $2, version, status,
            case when left(shape, length($1) + 1) = $1 || '@' then $2 || substr(shape, length($1) + 1) else shape end,
            created_at, caught_up_at, activated_at, retired_at
       from ${s}.projection_versions where projection = $1`,
    [from, to],
  );
  await q.query(`update ${s}.projection_checkpoints set projection = $2 where projection = $1`, [from, to]);
  await q.query(`delete from ${s}.projection_versions where projection = $1`, [from]);
  await q.query(`update ${s}.projection_heads set projection = $2 where projection = $1`, [from, to]);
  await q.query(`update ${s}.projection_dead_letters set projection = $2 where projection = $1`, [from, to]);
}
