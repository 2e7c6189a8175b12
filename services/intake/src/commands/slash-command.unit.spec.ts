import { APPLICATION_COMMANDS, CASELOOP_COMMAND, parseSlash, SlashInteraction } from './slash-command';

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

describe('the registered /caseloop definition', () => {
  type Sub = { name: string; options?: { name: string; required?: boolean; max_length?: number }[] };
  const subs = (CASELOOP_COMMAND.options ?? []) as Sub[];
  const valid: Record<string, string> = {
    text: 'keep it',
    reason: 'no',
    note: 'n',
    review: 'R01',
    sha256: 'a'.repeat(64),
  };

  it('offers every subcommand the parser reads, each parsed as a command with all its options filled', () => {
    expect(subs.map((s) => s.name)).toEqual([
      'approve',
      'revise',
      'reject',
      'actionable',
      'same',
      'different',
      'privacy-ok',
    ]);
    for (const sub of subs) {
      const options = Object.fromEntries((sub.options ?? []).map((o) => [o.name, valid[o.name] ?? '?']));
      expect([sub.name, parseSlash(data(sub.name, options))?.status]).toEqual([sub.name, 'command']);
    }
  });

  it('marks required exactly the options the parser cannot do without', () => {
    for (const sub of subs) {
      for (const option of sub.options ?? []) {
        const others = (sub.options ?? []).filter((o) => o !== option);
        const without = Object.fromEntries(others.map((o) => [o.name, valid[o.name] ?? '?']));
        expect([sub.name, option.name, parseSlash(data(sub.name, without))?.status]).toEqual([
          sub.name,
          option.name,
          option.required ? 'malformed' : 'command',
        ]);
      }
    }
  });

  it("keeps to Discord's rules for names (lowercase, 1-32) and descriptions (1-100)", () => {
    const named: { name: string; description: string }[] = [
      ...APPLICATION_COMMANDS,
      ...subs.map((s) => s as unknown as { name: string; description: string }),
      ...subs.flatMap((s) => (s.options ?? []) as unknown as { name: string; description: string }[]),
    ];
    for (const n of named) {
      expect(n.name).toMatch(/^[-_\p{L}\p{N}]{1,32}$/u);
      expect(n.name).toBe(n.name.toLowerCase());
      expect(n.description.length).toBeGreaterThanOrEqual(1);
      expect(n.description.length).toBeLessThanOrEqual(100);
    }
    expect(APPLICATION_COMMANDS.map((c) => c.name)).toEqual(['caseloop']);
  });
});
