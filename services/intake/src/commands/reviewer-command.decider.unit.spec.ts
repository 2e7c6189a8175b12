import { decideCommand } from './reviewer-command.decider';

const reviewers = ['400'];
const cmd = (authorId: string, parsed: Parameters<typeof decideCommand>[0]['parsed']) =>
  decideCommand({ authorId, messageId: '7', parsed }, reviewers, new Set(['R1']));

describe('reviewer command decisions', () => {
  it('turns a reviewer command into its event', () => {
    expect(cmd('400', { status: 'command', command: { kind: 'approve' } })).toEqual({
      accepted: {
        type: 'ReviewerDecided',
        data: { reviewerId: '400', messageId: '7', decision: 'approve', text: null },
      },
    });
    expect(cmd('400', { status: 'command', command: { kind: 'revise', text: 'add a test' } })).toMatchObject({
      accepted: { data: { decision: 'revise', text: 'add a test' } },
    });
    expect(cmd('400', { status: 'command', command: { kind: 'actionable', note: null } })).toMatchObject({
      accepted: { type: 'CaseMadeActionable' },
    });
    expect(cmd('400', { status: 'command', command: { kind: 'same', reviewId: 'R1' } })).toMatchObject({
      accepted: { type: 'LinkReviewSettled', data: { verdict: 'same', reviewId: 'R1' } },
    });
    expect(
      cmd('400', { status: 'command', command: { kind: 'privacy-ok', sha256: 'b'.repeat(64) } }),
    ).toMatchObject({ accepted: { type: 'PrivacyApproved' } });
  });

  it('refuses anyone not listed as a reviewer, whatever the command', () => {
    expect(cmd('300', { status: 'command', command: { kind: 'approve' } })).toEqual({
      refused: 'not_a_reviewer',
      command: 'approve',
    });
    expect(cmd('300', { status: 'malformed', name: 'reject', problem: 'x' })).toEqual({
      refused: 'not_a_reviewer',
      command: 'reject',
    });
  });

  it('refuses a settlement for a review that is not pending, and a malformed command', () => {
    expect(cmd('400', { status: 'command', command: { kind: 'different', reviewId: 'R9' } })).toEqual({
      refused: 'not_applicable',
      command: 'different',
    });
    expect(cmd('400', { status: 'malformed', name: 'revise', problem: 'x' })).toEqual({
      refused: 'malformed',
      command: 'revise',
    });
  });
});
