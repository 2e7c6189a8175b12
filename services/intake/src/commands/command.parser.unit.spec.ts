import { parseCommand } from './command.parser';

const SELF = '999';
const SHA = 'a'.repeat(64);

describe('reviewer command parser', () => {
  it.each([
    ['approve', { kind: 'approve' }],
    ['  Approve ', { kind: 'approve' }],
    [`<@${SELF}> approve`, { kind: 'approve' }],
    [
      'revise: use the shared formatter\nand add a test',
      { kind: 'revise', text: 'use the shared formatter\nand add a test' },
    ],
    ['reject: not a bug', { kind: 'reject', reason: 'not a bug' }],
    ['actionable', { kind: 'actionable', note: null }],
    ['actionable: owner is payments', { kind: 'actionable', note: 'owner is payments' }],
    ['same R01ABC', { kind: 'same', reviewId: 'R01ABC' }],
    ['different R01ABC', { kind: 'different', reviewId: 'R01ABC' }],
    [`privacy ok ${SHA}`, { kind: 'privacy-ok', sha256: SHA }],
    [`PRIVACY OK ${SHA.toUpperCase()}`, { kind: 'privacy-ok', sha256: SHA }],
  ])('parses %j', (text, command) => {
    expect(parseCommand(text, SELF)).toEqual({ status: 'command', command });
  });

  it.each([
    ['revise', 'revise'],
    ['revise:', 'revise'],
    ['reject', 'reject'],
    ['reject:   ', 'reject'],
    ['same', 'same'],
    ['different: bad id!', 'different'],
    ['privacy ok 1234', 'privacy-ok'],
  ])('answers a malformed %j', (text, name) => {
    expect(parseCommand(text, SELF)).toMatchObject({ status: 'malformed', name });
  });

  it.each([
    'I approve of this change',
    'approve it please',
    'the same thing happens on mobile',
    'rejected by the server with 500',
    'hello',
    '',
    'approve: yes',
  ])('does not take ordinary text %j for a command', (text) => {
    expect(parseCommand(text, SELF)).toEqual({ status: 'not_a_command' });
  });
});
