import { draft, RecordedEvent, SealedText, visibleChars } from '@caseloop/contracts';
import { connectLedger, Ledger, SourceKeys, sourceKeyStream } from '@caseloop/ledger';
import { sanitizeReport } from '@caseloop/privacy';
import { NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { loadIntakeIndex } from './intake-index.loader';
import { IntakeIndex } from './intake-index';
import { IntakeLedgerWriter } from './ledger-writer';
import { deletedMessageIds, SourceForgetter } from './source.forgetter';

jest.setTimeout(60_000);

const RAW = 'Login fails; my key AKIAIOSFODNN7EXAMPLE is in the log';
const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The forget path against the real ledger and key bucket, without Discord. */
describe('SourceForgetter', () => {
  let ledger: Ledger;
  let keys: SourceKeys;
  let writer: IntakeLedgerWriter;

  beforeAll(async () => {
    const ns = uniqueSuffix('forget');
    ledger = await connectLedger({
      servers: NATS_URL,
      namespace: ns,
      stream: `T${ns.toUpperCase()}`,
      name: 'intake',
    });
    await ledger.provision();
    keys = await SourceKeys.open(ledger.js, ledger.jsm, ns);
    writer = new IntakeLedgerWriter(ledger.store);
  });
  afterAll(async () => {
    await ledger.jsm.streams.delete(ledger.stream).catch(() => undefined);
    await ledger.jsm.streams.delete(`${ledger.stream}_DLQ`).catch(() => undefined);
    await ledger.jsm.streams.delete(sourceKeyStream(ledger.namespace)).catch(() => undefined);
    await ledger.close();
  });

  async function receive(messageId: string): Promise<{ sourceId: string; sealed: SealedText }> {
    const sourceId = `discord-${messageId}`;
    const sealed = await keys.seal(sourceId, RAW);
    if (sealed === 'forgotten') throw new Error('a new source has no delete marker');
    await writer.append({
      aggregate: 'source',
      aggregateId: sourceId,
      commandId: `recv-${messageId}`,
      causationId: null,
      correlationId: sourceId,
      occurredAt: new Date().toISOString(),
      expectedSeq: 0,
      event: draft('SourceReceived', {
        sourceId,
        place: { guildId: '1', channelId: '2', threadId: null, messageId },
        authorId: '3',
        authorIsReviewer: false,
        content: sanitizeReport(RAW).brief,
        rawChars: visibleChars(RAW),
        sealed,
        attachments: [],
        mentionedBot: false,
        createdAt: new Date().toISOString(),
        via: 'gateway',
      }),
    });
    return { sourceId, sealed };
  }

  const forgottenEvents = async (sourceId: string) =>
    (await ledger.store.load('source', sourceId)).events.filter(
      (e): e is RecordedEvent<'SourceForgotten'> => e.type === 'SourceForgotten',
    );

  it('records SourceForgotten once, erases the key, and says so when asked again', async () => {
    const { sourceId, sealed } = await receive('1001');
    const forgetter = new SourceForgetter(ledger.store, writer, keys, new IntakeIndex(), log);
    expect(await keys.open(sourceId, sealed)).toBe(RAW);
    expect(await forgetter.forget(sourceId, 'operator')).toBe('forgotten');
    expect(await forgetter.forget(sourceId, 'message_deleted')).toBe('already_forgotten');
    expect((await forgottenEvents(sourceId)).map((e) => e.data)).toEqual([
      { sourceId, keyId: sealed.keyId, reason: 'operator' },
    ]);
    expect(await keys.state(sourceId)).toBe('forgotten');
    expect(await keys.open(sourceId, sealed)).toBeNull();
    // The same message seen again (the delta) is not sealed with a new key.
    expect(await keys.seal(sourceId, RAW)).toBe('forgotten');
  });

  it('says not_recorded for a message it never recorded, and writes nothing', async () => {
    const forgetter = new SourceForgetter(ledger.store, writer, keys, new IntakeIndex(), log);
    expect(await forgetter.forget('discord-1999', 'message_deleted')).toBe('not_recorded');
    expect((await ledger.store.load('source', 'discord-1999')).events).toEqual([]);
  });

  it('finishes at start a forget that stopped between the event and the erase', async () => {
    const { sourceId, sealed } = await receive('1002');
    // The stop: SourceForgotten is in the ledger, the key is not erased yet.
    await writer.append({
      aggregate: 'source',
      aggregateId: sourceId,
      commandId: `forget-${sourceId}`,
      causationId: null,
      correlationId: sourceId,
      occurredAt: new Date().toISOString(),
      event: draft('SourceForgotten', { sourceId, keyId: sealed.keyId, reason: 'message_deleted' }),
    });
    expect(await keys.state(sourceId)).toBe('present');
    const { index } = await loadIntakeIndex(ledger);
    expect(index.forgotten.has(sourceId)).toBe(true);
    const forgetter = new SourceForgetter(ledger.store, writer, keys, index, log);
    expect(await forgetter.finishInterrupted()).toBe(1);
    expect(await keys.open(sourceId, sealed)).toBeNull();
    expect(await forgetter.finishInterrupted()).toBe(0);
  });

  it('reads the deleted ids of MESSAGE_DELETE and MESSAGE_DELETE_BULK in the bound guild only', () => {
    expect(deletedMessageIds({ id: '5', channel_id: '2', guild_id: '1' }, false, '1')).toEqual(['5']);
    expect(deletedMessageIds({ ids: ['5', '6'], channel_id: '2', guild_id: '1' }, true, '1')).toEqual([
      '5',
      '6',
    ]);
    expect(deletedMessageIds({ id: '5', channel_id: '2', guild_id: '9' }, false, '1')).toEqual([]);
    expect(deletedMessageIds({ id: '5', channel_id: '2' }, false, '1')).toEqual([]);
    expect(deletedMessageIds({ nonsense: true }, false, '1')).toEqual([]);
  });
});
