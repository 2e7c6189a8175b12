import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The projection runtime: which version of each projection readers see, the versions built,
 * the checkpoint of each version (bound to the stream's identity) and the dead letters.
 * The projections' own tables are versioned (`cases_v1`, `cases_v2`, …) and created from their
 * table specs when a version is created; readers use views named after the tables.
 */
export class ProjectionRuntime1764460800000 implements MigrationInterface {
  name = 'ProjectionRuntime1764460800000';

  async up(q: QueryRunner): Promise<void> {
    const s = `"${(q.connection.options as { schema: string }).schema}"`;
    await q.query(`create table ${s}.projection_heads (
      projection text primary key,
      active_version integer not null,
      switched_at timestamptz not null default now()
    )`);
    await q.query(`create table ${s}.projection_versions (
      projection text not null,
      version integer not null,
      status text not null check (status in ('building', 'active', 'retired')),
      shape text not null,
      created_at timestamptz not null default now(),
      caught_up_at timestamptz,
      activated_at timestamptz,
      retired_at timestamptz,
      primary key (projection, version)
    )`);
    await q.query(`create table ${s}.projection_checkpoints (
      projection text not null,
      version integer not null,
      seq bigint not null default 0,
      stream text,
      stream_created text,
      updated_at timestamptz not null default now(),
      primary key (projection, version),
      foreign key (projection, version) references ${s}.projection_versions (projection, version)
    )`);
    await q.query(`create table ${s}.projection_dead_letters (
      projection text not null,
      version integer not null,
      seq bigint not null,
      subject text not null,
      code text not null,
      error text not null,
      body bytea,
      recorded_at timestamptz not null default now(),
      redriven_at timestamptz,
      primary key (projection, version, seq)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    const s = `"${(q.connection.options as { schema: string }).schema}"`;
    await q.query(`drop table ${s}.projection_dead_letters`);
    await q.query(`drop table ${s}.projection_checkpoints`);
    await q.query(`drop table ${s}.projection_versions`);
    await q.query(`drop table ${s}.projection_heads`);
  }
}
