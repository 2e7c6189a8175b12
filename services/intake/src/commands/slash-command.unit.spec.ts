import { parseSlash, SlashInteraction } from './slash-command';

const data = (sub: string, options: Record<string, string> = {}): SlashInteraction['data'] => ({
  name: 'caseloop',
  options: [
    {
      name: sub,
      type: 1,
      options: Object.entries(options).map(([name, value]) => ({ name, type: 3, value })),
    },
  ],
});

describe('slash command parser', () => {
  it('maps each subcommand to the same commands as plain text', () => {
    expect(parseSlash(data('approve'))).toEqual({ status: 'command', command: { kind: 'approve' } });
    expect(parseSlash(data('revise', { text: ' keep the header ' }))).toEqual({
      status: 'command',
      command: { kind: 'revise', text: 'keep the header' },
    });
    expect(parseSlash(data('reject', { reason: 'works as designed' }))).toEqual({
      status: 'command',
      command: { kind: 'reject', reason: 'works as designed' },
    });
    expect(parseSlash(data('actionable'))).toEqual({
      status: 'command',
      command: { kind: 'actionable', note: null },
    });
    expect(parseSlash(data('same', { review: 'R01' }))).toEqual({
      status: 'command',
      command: { kind: 'same', reviewId: 'R01' },
    });
    expect(parseSlash(data('privacy-ok', { sha256: 'A'.repeat(64) }))).toEqual({
      status: 'command',
      command: { kind: 'privacy-ok', sha256: 'a'.repeat(64) },
    });
  });

  it('answers missing or bad options as malformed, and ignores other commands', () => {
    expect(parseSlash(data('revise'))).toMatchObject({ status: 'malformed', name: 'revise' });
    expect(parseSlash(data('different', { review: 'a b' }))).toMatchObject({
      status: 'malformed',
      name: 'different',
    });
    expect(parseSlash({ name: 'other', options: [] })).toBeNull();
  });
});
