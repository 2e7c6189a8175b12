import { RecordedEvent } from '@caseloop/contracts';
import { SourceKeys } from '@caseloop/ledger';
import { Client } from 'pg';
import { LoopWorld, ofType, REPORTS, runCli, until } from './e2e/loop.fixture';

jest.setTimeout(600_000);

// Fabricated credentials of the two kinds a reporter pastes most (the scanner's own test values).
const AWS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const GITHUB_TOKEN = 'ghp_R4nd0mL00kingT0k3nV4lu3F0rT3st1ng9Qz';
const RAW = [AWS_KEY_ID, GITHUB_TOKEN];

/**
 * Raw report text at rest: through the whole running system, no Postgres row of the projection
 * schema holds a reporter's credential; the ledger keeps the redacted copy and the raw text sealed
 * under a key of its own, and `caseloop forget` or deleting the message in Discord forgets it.
 */
describe('raw report text, private at rest and forgettable', () => {
  let w: LoopWorld;
  let keys: SourceKeys;
  let failed = false;

  beforeAll(async () => {
    w = await LoopWorld.start();
    keys = await SourceKeys.open(w.ledger.js, w.ledger.jsm, w.stack.namespace);
  });
  afterEach(() => {
    const state = expect.getState();
    if (state.assertionCalls > 0 && state.numPassingAsserts < state.assertionCalls) failed = true;
  });
  afterAll(async () => {
    if (failed && w) process.stdout.write(w.logTail());
    await w?.stop();
  });

  /** Every row of every table and view in the stack's projection schema, as text, with where it is. */
  async function projectionRows(): Promise<{ table: string; row: string }[]> {
    const pg = new Client({ connectionString: w.stack.databaseUrl });
    await pg.connect();
    try {
      const tables = await pg.query<{ table_name: string }>(
        'select table_name from information_schema.tables where table_schema = $1',
        [w.stack.dbSchema],
      );
      const out: { table: string; row: string }[] = [];
      for (const { table_name } of tables.rows) {
        const rows = await pg.query<{ row: string }>(
          `select t::text as row from "${w.stack.dbSchema}"."${table_name}" t`,
        );
        for (const r of rows.rows) out.push({ table: table_name, row: r.row });
      }
      return out;
    } finally {
      await pg.end();
    }
  }

  const received = async (messageId: string) =>
    until(`SourceReceived of ${messageId}`, 60_000, async () =>
      ofType(await w.sourceEvents(messageId), 'SourceReceived').at(0),
    );

  it('keeps credentials out of every projection row; the stream has the redacted copy and the sealed raw text', async () => {
    const text = `${REPORTS.cartTotal}\nI pasted my AWS key ${AWS_KEY_ID} and the token ${GITHUB_TOKEN} by mistake.`;
    const report = w.report('alice', text);
    await until('the acknowledgement in a thread', 120_000, () => w.botPosts(report.id)[0]);
    const { caseId } = await w.caseOf(report.id);

    const rec = await received(report.id);
    expect(rec.version).toBe(2);
    expect(rec.data.content).toContain('[redacted:aws_access_key_id]');
    expect(rec.data.content).toContain('[redacted:github_token]');
    for (const raw of RAW) expect(rec.data.content).not.toContain(raw);
    expect(rec.data.sealed).not.toBeNull();
    // The sealed text is the reporter's message, readable while its key exists.
    expect(await keys.open(rec.aggregateId, rec.data.sealed!)).toBe(text);

    // The privacy scope the coordinator recorded is that of the raw text.
    const privacy = await until('the privacy scope', 60_000, async () =>
      ofType(await w.events(caseId), 'PrivacyScopeSet').at(0),
    );
    expect(privacy.data.categories).toEqual(expect.arrayContaining(['aws_access_key_id', 'github_token']));

    // The projection has the case and its report (the audit waits for it), and no row anywhere
    // in the schema carries either credential.
    const audit = await w.audit(caseId);
    expect(audit.code).toBe(0);
    expect(audit.out).toContain(`${rec.aggregateId} sealed`);
    const rows = await projectionRows();
    expect(rows.some((r) => r.table.startsWith('timeline') && r.row.includes(rec.aggregateId))).toBe(true);
    expect(rows.filter((r) => RAW.some((raw) => r.row.includes(raw)))).toEqual([]);
    // Nor the sealed bytes: a read model keeps which key sealed the text, not the ciphertext.
    expect(rows.filter((r) => r.row.includes(rec.data.sealed!.ciphertext))).toEqual([]);
  });

  it('caseloop forget: the key is erased, SourceForgotten is appended, replay, audit and projections say forgotten', async () => {
    const text = `Checkout breaks with my token ${GITHUB_TOKEN} in the config. Chrome 120, shop 1.4.2.`;
    const report = w.report('bob', text);
    const { caseId } = await w.caseOf(report.id);
    const rec = await received(report.id);
    expect(await keys.state(rec.aggregateId)).toBe('present');
    const streamBefore = await w.ledger.jsm.streams.info(w.stack.stream);

    const forgot = await runCli(['forget', rec.aggregateId], w.stack.cliEnv);
    expect(forgot).toMatchObject({ code: 0 });
    expect(forgot.out).toContain('raw text forgotten');

    expect(await keys.state(rec.aggregateId)).toBe('forgotten');
    expect(await keys.open(rec.aggregateId, rec.data.sealed!)).toBeNull();
    const after = await w.sourceEvents(report.id);
    const forgotten = ofType(after, 'SourceForgotten');
    expect(forgotten.map((e) => e.data)).toEqual([
      { sourceId: rec.aggregateId, keyId: rec.data.sealed!.keyId, reason: 'operator' },
    ]);
    // Append-only: the report's events are all still there, and the stream refuses purges.
    expect(after.map((e) => e.seq)).toContain(rec.seq);
    const streamAfter = await w.ledger.jsm.streams.info(w.stack.stream);
    expect(streamAfter.state.first_seq).toBe(streamBefore.state.first_seq);
    expect(streamAfter.config).toMatchObject({ deny_delete: true, deny_purge: true });
    // Asking again changes nothing.
    expect((await runCli(['forget', rec.aggregateId], w.stack.cliEnv)).out).toContain('already forgotten');
    expect(ofType(await w.sourceEvents(report.id), 'SourceForgotten')).toHaveLength(1);

    const replay = await runCli(['replay', caseId], w.stack.cliEnv);
    expect(replay.code).toBe(0);
    expect(replay.out).toMatch(new RegExp(`SourceReceived .*raw text: forgotten`));
    expect(replay.out).toContain('SourceForgotten');
    const audit = await until('audit names the report forgotten', 60_000, async () => {
      const a = await w.audit(caseId);
      return a.out.includes(`${rec.aggregateId} forgotten`) ? a : null;
    });
    expect(audit.code).toBe(0);
    expect(audit.out).toContain('clean');
    const rows = await projectionRows();
    expect(
      rows.filter((r) => r.table.startsWith('sources') && r.row.includes(rec.aggregateId)).map((r) => r.row),
    ).toEqual(expect.arrayContaining([expect.stringContaining('forgotten')]));
    expect(rows.filter((r) => RAW.some((raw) => r.row.includes(raw)))).toEqual([]);
    // The case itself goes on: its other report's text is untouched.
    expect((await w.view(caseId)).status).not.toBe('none');
  });

  it('a report deleted in Discord (MESSAGE_DELETE) is forgotten by intake', async () => {
    const text = `Coupon field crashes the page, key ${AWS_KEY_ID} shown in the error. Chrome 120.`;
    const report = w.report('alice', text);
    const rec = await received(report.id);
    await until('👀 on the report', 60_000, () => w.reactions(report.id).includes('👀'));
    expect(await keys.state(rec.aggregateId)).toBe('present');

    w.discord.deleteMessage(report.id);
    const forgotten = await until('SourceForgotten after the delete', 60_000, async () =>
      ofType(await w.sourceEvents(report.id), 'SourceForgotten').at(0),
    );
    expect(forgotten.data).toEqual({
      sourceId: rec.aggregateId,
      keyId: rec.data.sealed!.keyId,
      reason: 'message_deleted',
    });
    // SourceForgotten is recorded first, then the key is erased and its delete marker written.
    await until('the key forgotten after SourceForgotten', 60_000, async () =>
      (await keys.state(rec.aggregateId)) === 'forgotten' ? true : null,
    );
    expect(await keys.open(rec.aggregateId, rec.data.sealed!)).toBeNull();
    const events: RecordedEvent[] = await w.sourceEvents(report.id);
    expect(events.filter((e) => e.type === 'SourceReceived')).toHaveLength(1);
  });
});
