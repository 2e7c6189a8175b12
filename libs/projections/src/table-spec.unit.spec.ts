import {
  batchWriteStatement,
  copyPayload,
  copyToStageSql,
  createIndexSql,
  createStageSql,
  createTableSql,
  dedupeByKey,
  TableSpec,
  upsertFromStageSql,
} from './table-spec';

const SPEC: TableSpec = {
  name: 'widgets',
  key: ['id'],
  columns: [
    { name: 'id', type: 'text' },
    { name: 'size', type: 'integer' },
    { name: 'meta', type: 'jsonb', nullable: true },
  ],
  indexes: [['size', 'size, id']],
};

describe('table specs', () => {
  it('create a versioned table with its key, and its secondary indexes separately', () => {
    expect(createTableSql('s', SPEC, 3)).toBe(
      'create table if not exists "s"."widgets_v3" (\n  "id" text not null,\n  "size" integer not null,\n  "meta" jsonb,\n  primary key ("id")\n)',
    );
    expect(createIndexSql('s', SPEC, 3)).toEqual([
      'create index if not exists "widgets_v3_size" on "s"."widgets_v3" ("size", "id")',
    ]);
  });

  it('keep the last change per key, in batch order (one statement cannot update a row twice)', () => {
    const rows = dedupeByKey(SPEC, [
      { id: 'a', size: 1 },
      { id: 'b', size: 2 },
      { id: 'a', size: 3 },
    ]);
    expect(rows).toEqual([
      { id: 'b', size: 2 },
      { id: 'a', size: 3 },
    ]);
  });

  it('write every table of a batch and the checkpoint in one statement with one JSON parameter per table', () => {
    const stmt = batchWriteStatement(
      's',
      [
        {
          spec: SPEC,
          rows: [
            { id: 'a', size: 1, meta: { x: 1 } },
            { id: 'a', size: 2, meta: null },
          ],
        },
      ],
      7,
      {
        sql: (n) => `update s.cp set seq = $${n}`,
        params: [42],
      },
    );
    expect(stmt?.sql).toBe(
      'with w0 as (insert into "s"."widgets_v7" ("id", "size", "meta") select "id", "size", "meta" from json_populate_recordset(null::"s"."widgets_v7", $1::json) on conflict ("id") do update set "size" = excluded."size", "meta" = excluded."meta") update s.cp set seq = $2',
    );
    expect(stmt?.params).toEqual(['[{"id":"a","size":2,"meta":null}]', 42]);
  });

  it('stage a batch with COPY in text format: escapes, SQL nulls, JSON with its backslashes doubled, last change per key', () => {
    const payload = copyPayload(SPEC, [
      { id: 'a', size: 1, meta: { x: 1 } },
      { id: 'tab\there\\new\nline\rcr', size: 2, meta: { quote: 'say "hi"\n', path: 'C:\\x' } },
      { id: 'a', size: 3, meta: null },
    ]);
    expect(payload).toEqual({
      rows: 2,
      text:
        'tab\\there\\\\new\\nline\\rcr\t2\t{"quote":"say \\\\"hi\\\\"\\\\n","path":"C:\\\\\\\\x"}\n' +
        'a\t3\t\\N\n',
    });
    expect(copyPayload(SPEC, [])).toBeNull();
    expect(() => copyPayload(SPEC, [{ id: 'a', size: undefined }])).toThrow('widgets.size may not be null');
    expect(createStageSql('s', SPEC, 7)).toBe(
      'create temp table if not exists "stage_widgets_v7" (like "s"."widgets_v7" including defaults) on commit delete rows',
    );
    expect(copyToStageSql(SPEC, 7)).toBe('copy pg_temp."stage_widgets_v7" ("id", "size", "meta") from stdin');
    expect(upsertFromStageSql('s', SPEC, 7)).toBe(
      'insert into "s"."widgets_v7" ("id", "size", "meta") select "id", "size", "meta" from pg_temp."stage_widgets_v7" on conflict ("id") do update set "size" = excluded."size", "meta" = excluded."meta"',
    );
  });

  it('refuse a null in a column that may not be null, and identifiers that are not plain', () => {
    expect(() => batchWriteStatement('s', [{ spec: SPEC, rows: [{ id: 'a', size: null }] }], 1)).toThrow(
      'widgets.size may not be null',
    );
    expect(() => createTableSql('s"; drop table x; --', SPEC, 1)).toThrow('not a plain SQL identifier');
  });
});
