import { PG_URL, uniqueSuffix } from '@caseloop/testing';
import type { PoolClient } from 'pg';
import { QueryRunner } from 'typeorm';
import { createProjectionDataSource } from './data-source';
import { copyIn } from './projection-runner';
import {
  batchWriteStatement,
  copyPayload,
  copyToStageSql,
  createStageSql,
  createTableSql,
  qualified,
  Row,
  TableSpec,
  upsertFromStageSql,
  versionedName,
} from './table-spec';

jest.setTimeout(60_000);

const SPEC: TableSpec = {
  name: 'things',
  key: ['id'],
  columns: [
    { name: 'id', type: 'text' },
    { name: 'n', type: 'bigint' },
    { name: 'i', type: 'integer', nullable: true },
    { name: 'ok', type: 'boolean', nullable: true },
    { name: 'at', type: 'timestamptz' },
    { name: 'note', type: 'text', nullable: true },
    { name: 'doc', type: 'jsonb', nullable: true },
  ],
};

/** Values COPY's text format must escape, and JSON whose own escapes contain backslashes. */
const ROWS: Row[] = [
  { id: 'plain', n: 1, i: 2, ok: true, at: '2026-01-01T00:00:00.000Z', note: 'x', doc: { a: 1 } },
  {
    id: 'tab\there',
    n: 9007199254740991,
    i: null,
    ok: false,
    at: '2026-03-04T05:06:07.891+02:00',
    note: 'line\nbreak\r\nand \\ slash',
    doc: null,
  },
  {
    id: 'back\\slash',
    n: 3,
    ok: null,
    at: new Date(Date.UTC(2026, 4, 5)),
    note: '\\N',
    doc: { s: 'quote " and \\ and \n and \t and \u0001 and é ✓', nested: [1, 'two', null, { x: true }] },
  },
  { id: '\\.', n: 4, i: -7, at: '2026-01-01T00:00:00Z', note: '', doc: 'a bare JSON string' },
  {
    id: 'plain',
    n: 5,
    i: 6,
    ok: true,
    at: '2026-01-02T00:00:00.000Z',
    note: 'the last change to plain wins',
    doc: [],
  },
];

describe('the COPY route writes exactly the rows the JSON route writes', () => {
  const schema = uniqueSuffix('c');
  const ds = createProjectionDataSource({ url: PG_URL, schema, poolSize: 2 });
  let qr: QueryRunner;
  let client: PoolClient;

  beforeAll(async () => {
    await ds.initialize();
    await ds.query(`create schema "${schema}"`);
    qr = ds.createQueryRunner();
    client = (await qr.connect()) as PoolClient;
  });
  afterAll(async () => {
    await qr.release();
    await ds.query(`drop schema if exists "${schema}" cascade`);
    await ds.destroy();
  });

  const dump = (version: number) =>
    qr.query(`select * from ${qualified(schema, versionedName(SPEC.name, version))} order by id`);

  it('for text that needs escaping, SQL nulls, numbers, timestamps and JSON documents; a re-applied batch overwrites', async () => {
    await qr.query(createTableSql(schema, SPEC, 1));
    await qr.query(createTableSql(schema, SPEC, 2));
    const json = batchWriteStatement(schema, [{ spec: SPEC, rows: ROWS }], 1);
    await qr.query(json!.sql, json!.params);

    const payload = copyPayload(SPEC, ROWS);
    expect(payload?.rows).toBe(4);
    for (let round = 0; round < 2; round++) {
      await qr.query('begin');
      await qr.query(createStageSql(schema, SPEC, 2));
      await copyIn(client, copyToStageSql(SPEC, 2), payload!.text);
      await qr.query(upsertFromStageSql(schema, SPEC, 2));
      await qr.query('commit');
    }
    const [viaJson, viaCopy] = [await dump(1), await dump(2)];
    expect(viaCopy).toHaveLength(4);
    expect(viaCopy).toEqual(viaJson);
    expect(viaCopy.find((r: Row) => r.id === 'back\\slash')?.doc).toEqual(ROWS[2]?.doc);
    expect(viaCopy.find((r: Row) => r.id === 'plain')?.note).toBe('the last change to plain wins');

    // The staging table is emptied by the commit.
    const [{ n }] = await qr.query(`select count(*)::int as n from pg_temp."stage_things_v2"`);
    expect(n).toBe(0);
  });

  it('a value COPY rejects fails the statement inside the transaction, and the connection stays usable', async () => {
    await qr.query('begin');
    await expect(
      copyIn(client, copyToStageSql(SPEC, 2), 'x\tnot a number\t\\N\t\\N\t2026-01-01T00:00:00Z\t\\N\t\\N\n'),
    ).rejects.toThrow(/bigint/);
    await qr.query('rollback');
    const [{ one }] = await qr.query('select 1 as one');
    expect(one).toBe(1);
  });
});
