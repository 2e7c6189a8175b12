import { headers, MsgHdrsImpl } from 'nats';
import { messageHeaders } from './message-headers';

describe('messageHeaders', () => {
  const fields = {
    'Nats-Msg-Id': 'cmd-1:0',
    'Caseloop-Event-Type': 'LeaseRequested',
    'Caseloop-Event-Version': '1',
    'Caseloop-Producer': 'lease',
  };
  const expectation = {
    'Nats-Expected-Last-Subject-Sequence': '42',
    'Nats-Expected-Last-Subject-Sequence-Subject': 'ns.case.C1.*',
  };

  it('encodes exactly as nats.js headers() does, and reads back the same', () => {
    const ours = messageHeaders(fields, expectation);
    const theirs = headers();
    for (const [k, v] of Object.entries({ ...fields, ...expectation })) theirs.append(k, v);
    expect(new TextDecoder().decode(ours.encode())).toBe(
      new TextDecoder().decode((theirs as MsgHdrsImpl).encode()),
    );
    expect(ours.get('Nats-Msg-Id')).toBe('cmd-1:0');
    expect(ours.get('Nats-Expected-Last-Subject-Sequence')).toBe('42');
    expect(ours.keys()).toEqual(theirs.keys());
    expect(ours.hasError).toBe(false);
  });

  it('trims values as nats.js does', () => {
    expect(messageHeaders({ K: ' v ' }).get('K')).toBe('v');
  });

  it('refuses an empty key (nats.js would write a bare colon)', () => {
    expect(() => messageHeaders({ '': 'v' })).toThrow(expect.objectContaining({ code: 'append_refused' }));
  });

  it.each([
    ['a key with a colon', { 'Bad:Key': 'v' }],
    ['a key with a space', { 'Bad Key': 'v' }],
    ['a value with a line break', { K: 'a\r\nInjected: x' }],
    ['a value with a bare newline', { K: 'a\nb' }],
  ])('refuses %s, as nats.js does', (_, bad) => {
    expect(() => messageHeaders(bad)).toThrow(expect.objectContaining({ code: 'append_refused' }));
    expect(() => {
      const h = headers();
      for (const [k, v] of Object.entries(bad)) h.append(k, v);
    }).toThrow();
  });
});
