import { draft, EventDraft, eventDefinition, RecordedEvent, visibleChars } from '@caseloop/contracts';
import { identityConfig } from '@caseloop/identity';
import { IdentityReadModel } from './identity.read-model';

let seq = 0;
const rec = (d: EventDraft, aggregateId: string): RecordedEvent => {
  const def = eventDefinition(d.type)!;
  seq += 1;
  return {
    ...d,
    data: def.schema.parse(d.data),
    eventId: `e${seq}:0`,
    version: 1,
    aggregate: def.aggregate,
    aggregateId,
    producer: def.producer,
    commandId: `e${seq}`,
    causationId: null,
    correlationId: 'c',
    occurredAt: '2026-11-29T12:00:00.000Z',
    seq,
    subject: 's',
  } as RecordedEvent;
};
const place = (m: string, t: string | null = null) => ({
  guildId: '1',
  channelId: '2',
  threadId: t,
  messageId: m,
});
const received = (m: string, content: string, thread: string | null = null) =>
  rec(
    draft('SourceReceived', {
      sourceId: `discord-${m}`,
      place: place(m, thread),
      authorId: '9',
      authorIsReviewer: false,
      content,
      rawChars: visibleChars(content),
      sealed: null,
      attachments: [],
      mentionedBot: false,
      createdAt: '2026-11-29T12:00:00.000Z',
      via: 'gateway',
    }),
    `discord-${m}`,
  );
const opened = (caseId: string, m: string) =>
  rec(
    draft('CaseOpened', {
      sourceId: `discord-${m}`,
      place: place(m),
      reporterId: '9',
      title: 't',
      confidence: 0,
      reasons: [],
    }),
    caseId,
  );

describe('identity read model', () => {
  const TEXT = 'Uploading any file larger than 25 MB fails with 413 Payload Too Large on the web app';

  it('indexes a case by its sources, maps its threads, and is idempotent', () => {
    const m = new IdentityReadModel(identityConfig());
    for (let i = 0; i < 2; i++) {
      m.apply(received('10', TEXT));
      m.apply(opened('C1', '10'));
    }
    expect(m.openCases()).toEqual(['C1']);
    expect(m.caseOfSource('discord-10')).toBe('C1');
    expect(m.caseOfThread('10')).toBe('C1');
    expect(m.index.decide({ text: 'attachments over 25mb fail to upload with a 413' }).matchedWith).toBe(
      'C1',
    );
  });

  it('indexes a source whose text arrives after its case listed it (replay order)', () => {
    const m = new IdentityReadModel(identityConfig());
    m.apply(opened('C2', '20'));
    expect(m.index.size).toBe(0);
    m.apply(received('20', TEXT));
    expect(m.index.decide({ text: TEXT }).matchedWith).toBe('C2');
  });

  it('learns case threads from confirmed deliveries and held reports', () => {
    const m = new IdentityReadModel(identityConfig());
    m.apply(received('30', TEXT));
    m.apply(opened('C3', '30'));
    m.apply(
      rec(
        draft('LinkReviewRequested', {
          sourceId: 'discord-31',
          place: place('31'),
          reporterId: '9',
          reviewId: 'R1',
          confidence: 0.3,
          reasons: [],
        }),
        'C3',
      ),
    );
    m.apply(
      rec(
        draft('DeliveryConfirmed', {
          deliveryId: 'd',
          chunkIndex: 0,
          sourceId: 'discord-30',
          discordMessageId: '77',
          channelId: '2',
          threadId: '555',
          reconciled: false,
        }),
        'C3',
      ),
    );
    expect(m.caseOfThread('31')).toBe('C3');
    expect(m.caseOfThread('555')).toBe('C3');
  });

  it('drops a closed case from the index, its threads and its texts, but remembers where its sources went', () => {
    const m = new IdentityReadModel(identityConfig());
    m.apply(received('40', TEXT));
    m.apply(opened('C4', '40'));
    m.apply(rec(draft('CaseRejected', { reviewerId: '5', reason: null }), 'C4'));
    expect(m.openCases()).toEqual([]);
    expect(m.index.size).toBe(0);
    expect(m.caseOfThread('40')).toBeNull();
    expect(m.caseOfSource('discord-40')).toBe('C4');
    expect(m.factsOf('discord-40')?.text).toBe('');
    m.apply(
      rec(
        draft('SourceLinked', {
          sourceId: 'discord-41',
          place: place('41'),
          reporterId: '9',
          via: 'semantic_match',
          confidence: 1,
          reasons: [],
        }),
        'C4',
      ),
    );
    expect(m.openCases()).toEqual([]);
  });

  it('matches on sanitized text: private context never steers identity', () => {
    const m = new IdentityReadModel(identityConfig());
    expect(m.sanitized('Export fails.\nCustomer: ACME Corp')).not.toContain('ACME');
  });
});
