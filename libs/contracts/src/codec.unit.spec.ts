import { ContractError } from './errors';
import { decodeEvent, encodeEvent } from './codec';
import { LedgerEvent } from './envelope';
import { assertSafeId, ulidFrom } from './ids';

const ns = 'caseloop';
const base = {
  eventId: 'cmd-1:0',
  version: 1,
  aggregate: 'case' as const,
  aggregateId: 'C01JABCDEF',
  producer: 'coordinator' as const,
  commandId: 'cmd-1',
  causationId: null,
  correlationId: 'corr-1',
  occurredAt: '2026-11-29T10:00:00.000Z',
};
const approved: LedgerEvent = {
  ...base,
  type: 'CaseApproved',
  data: { reviewerId: '123456789012345678', branch: 'caseloop/C01JABCDEF', revision: 'a'.repeat(40) },
};

describe('event codec', () => {
  it('round-trips an event through its subject', () => {
    const enc = encodeEvent(ns, approved);
    expect(enc.subject).toBe('caseloop.case.C01JABCDEF.coordinator');
    expect(enc.headers).toEqual({
      'Nats-Msg-Id': 'cmd-1:0',
      'Caseloop-Event-Type': 'CaseApproved',
      'Caseloop-Event-Version': '1',
      'Caseloop-Producer': 'coordinator',
    });
    const dec = decodeEvent(enc.subject, enc.body, 7);
    expect(dec).toMatchObject({ ...approved, seq: 7, subject: enc.subject });
  });

  it.each([
    ['malformed_json', 'caseloop.case.C01JABCDEF.coordinator', new TextEncoder().encode('{nope')],
    ['subject_mismatch', 'caseloop.case.OTHER.coordinator', encodeEvent(ns, approved).body],
    ['subject_mismatch', 'caseloop.case.C01JABCDEF.intake', encodeEvent(ns, approved).body],
  ])('refuses %s', (code, subject, body) => {
    expect(() => decodeEvent(subject, body, 3)).toThrow(expect.objectContaining({ code }));
  });

  it('reads a SourceReceived v1 (raw text in content) as v2: content redacted, raw text not kept', () => {
    const raw = 'Login fails; key AKIAIOSFODNN7EXAMPLE\nCustomer: ACME GmbH';
    const v1 = {
      ...base,
      aggregate: 'source',
      aggregateId: 'discord-1',
      producer: 'intake',
      type: 'SourceReceived',
      data: {
        sourceId: 'discord-1',
        place: { guildId: '1', channelId: '2', threadId: null, messageId: '1' },
        authorId: '3',
        authorIsReviewer: false,
        content: raw,
        attachments: [],
        mentionedBot: false,
        createdAt: '2026-11-29T10:00:00.000Z',
        via: 'gateway',
      },
    };
    const dec = decodeEvent(
      'caseloop.source.discord-1.intake',
      new TextEncoder().encode(JSON.stringify(v1)),
      5,
    );
    expect(dec).toMatchObject({ type: 'SourceReceived', version: 2 });
    expect(dec.data).toMatchObject({
      content: 'Login fails; key [redacted:aws_access_key_id]\nCustomer: [redacted:private_context]',
      rawChars: raw.replace(/\s+/g, '').length,
      sealed: null,
    });
  });

  it('refuses a producer writing an event it does not own', () => {
    const forged = { ...approved, producer: 'monitor' as const };
    expect(() => encodeEvent(ns, forged)).toThrow(expect.objectContaining({ code: 'producer_not_owner' }));
    const body = new TextEncoder().encode(JSON.stringify(forged));
    expect(() => decodeEvent('caseloop.case.C01JABCDEF.monitor', body, 9)).toThrow(
      expect.objectContaining({ code: 'producer_not_owner' }),
    );
  });

  it('refuses a version newer than the reader and an unknown type, naming the sequence', () => {
    const newer = new TextEncoder().encode(JSON.stringify({ ...approved, version: 2 }));
    expect(() => decodeEvent('caseloop.case.C01JABCDEF.coordinator', newer, 42)).toThrow(/seq 42.*newer/);
    const unknown = new TextEncoder().encode(JSON.stringify({ ...approved, type: 'CaseTeleported' }));
    expect(() => decodeEvent('caseloop.case.C01JABCDEF.coordinator', unknown, 43)).toThrow(
      expect.objectContaining({ code: 'unknown_event_type' }),
    );
  });

  it('refuses an envelope a reader would refuse', () => {
    expect(() => encodeEvent(ns, { ...approved, occurredAt: '2026-11-29 10:00' })).toThrow(
      expect.objectContaining({ code: 'invalid_envelope', message: expect.stringContaining('occurredAt') }),
    );
    expect(() => encodeEvent(ns, { ...approved, correlationId: 'a b' })).toThrow(
      expect.objectContaining({ code: 'invalid_envelope' }),
    );
  });

  it('writes the payload as its schema parsed it, and only the envelope fields', () => {
    const extra = { ...approved, data: { ...approved.data, stray: 1 }, stray: 2 } as unknown as LedgerEvent;
    const body = JSON.parse(new TextDecoder().decode(encodeEvent(ns, extra).body));
    expect(body).toEqual(approved);
  });

  it('refuses an invalid payload before it reaches the stream', () => {
    expect(() =>
      encodeEvent(ns, { ...approved, data: { reviewerId: 'x' } } as unknown as LedgerEvent),
    ).toThrow(expect.objectContaining({ code: 'invalid_payload' }));
  });

  it.each(['a.b', 'a*', '>', 'a b', '../x', 'a/b', '$(rm)', '', 'x'.repeat(129)])(
    'rejects unsafe id %j',
    (id) => {
      expect(() => assertSafeId('caseId', id)).toThrow(ContractError);
    },
  );

  it('makes sortable ULIDs from injected time and randomness', () => {
    const r = new Uint8Array(10).fill(255);
    const a = ulidFrom(1_700_000_000_000, r);
    const b = ulidFrom(1_700_000_000_001, new Uint8Array(10));
    expect(a).toHaveLength(26);
    expect(a < b).toBe(true);
  });
});
