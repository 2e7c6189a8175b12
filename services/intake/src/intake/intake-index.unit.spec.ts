import { RecordedEvent } from '@caseloop/contracts';
import { IntakeIndex, snowflakeGreater } from './intake-index';

let seq = 0;
const ev = (
  type: string,
  aggregate: 'source' | 'case' | 'ops',
  aggregateId: string,
  data: unknown,
  occurredAt = '2026-11-29T10:00:00.000Z',
): RecordedEvent =>
  ({
    type,
    aggregate,
    aggregateId,
    data,
    seq: ++seq,
    occurredAt,
    producer: 'intake',
    eventId: `e${seq}`,
    version: 1,
    commandId: `c${seq}`,
    causationId: null,
    correlationId: 'x',
    subject: 's',
  }) as unknown as RecordedEvent;
const place = (messageId: string, threadId: string | null = null) => ({
  guildId: '1',
  channelId: '10',
  threadId,
  messageId,
});

describe('the intake index', () => {
  it('compares snowflakes by value', () => {
    expect(snowflakeGreater('100', '99')).toBe(true);
    expect(snowflakeGreater('99', '100')).toBe(false);
  });

  it('owes a receipt until ReadReceiptAdded, counts top-level reports per author and day, tracks the last id per channel', () => {
    const i = new IntakeIndex();
    i.apply(
      ev('SourceReceived', 'source', 'discord-100', {
        sourceId: 'discord-100',
        place: place('100'),
        authorId: '7',
        createdAt: '2026-11-29T10:00:00.000Z',
      }),
    );
    i.apply(
      ev('SourceReceived', 'source', 'discord-99', {
        sourceId: 'discord-99',
        place: place('99'),
        authorId: '7',
        createdAt: '2026-11-29T09:00:00.000Z',
      }),
    );
    expect([...i.unreceipted.keys()]).toEqual(['discord-100', 'discord-99']);
    expect(i.reportsToday('7', '2026-11-29T23:59:00.000Z')).toBe(2);
    expect(i.reportsToday('7', '2026-11-30T00:00:00.000Z')).toBe(0);
    expect(i.lastSeen.get('10')).toBe('100');
    i.apply(
      ev('ReadReceiptAdded', 'source', 'discord-100', {
        sourceId: 'discord-100',
        messageId: '100',
        emoji: '👀',
      }),
    );
    expect([...i.unreceipted.keys()]).toEqual(['discord-99']);
    expect(i.sourceSeq.has('discord-100')).toBe(false);
  });

  it('learns case threads from confirmed deliveries; replies there do not count as reports', () => {
    const i = new IntakeIndex();
    i.apply(
      ev('DeliveryIntended', 'case', 'C1', {
        deliveryId: 'D1',
        chunkIndex: 0,
        nonce: 'n',
        channelId: '10',
        threadId: '500',
        contentSha256: 'a'.repeat(64),
        intendedAt: 't',
      }),
    );
    expect(i.openIntents.size).toBe(1);
    i.apply(
      ev('DeliveryConfirmed', 'case', 'C1', {
        deliveryId: 'D1',
        chunkIndex: 0,
        threadId: '500',
        discordMessageId: '501',
      }),
    );
    expect(i.openIntents.size).toBe(0);
    expect(i.caseThreads.get('500')).toBe('C1');
    i.apply(
      ev('SourceReceived', 'source', 'discord-502', {
        sourceId: 'discord-502',
        place: place('502', '500'),
        authorId: '7',
        createdAt: '2026-11-29T10:00:00.000Z',
      }),
    );
    expect(i.reportsToday('7', '2026-11-29T10:00:00.000Z')).toBe(0);
    expect(i.lastSeen.get('500')).toBe('502');
  });

  it('owes a notice for a noticed drop and remembers the ceiling notice for the day', () => {
    const i = new IntakeIndex();
    i.apply(
      ev('SourceDropped', 'source', 'discord-7', {
        sourceId: 'discord-7',
        place: place('7'),
        authorId: '3',
        reason: 'daily_ceiling',
        via: 'gateway',
        notice: true,
      }),
    );
    i.apply(
      ev('SourceDropped', 'source', 'discord-8', {
        sourceId: 'discord-8',
        place: place('8'),
        authorId: '3',
        reason: 'author_not_listed',
        via: 'gateway',
      }),
    );
    expect([...i.pendingNotices.keys()]).toEqual(['discord-7']);
    expect(i.ceilingNoticed.has('3|2026-11-29')).toBe(true);
    expect(i.sourceSeq.has('discord-8')).toBe(false);
    i.apply(
      ev('DropNoticeSent', 'source', 'discord-7', {
        sourceId: 'discord-7',
        reason: 'daily_ceiling',
        discordMessageId: '9',
      }),
    );
    expect(i.pendingNotices.size).toBe(0);
  });
});
