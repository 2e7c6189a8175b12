/** The fixed lines intake answers commands with. Deterministic, so a reconciled reply can be re-derived. */
export type CommandRefusalReason = 'not_a_reviewer' | 'not_applicable' | 'malformed';

export function commandRefusalLine(reason: CommandRefusalReason): string {
  switch (reason) {
    case 'not_a_reviewer':
      return 'Only the reviewers listed for this server can approve, revise, reject or settle reviews; nothing was changed.';
    case 'not_applicable':
      return 'That command does not apply to this case right now (no such pending review); nothing was changed.';
    case 'malformed':
      return 'Commands: `approve`, `revise: <what to change>`, `reject: <reason>`, `actionable`, `same <review id>`, `different <review id>`, `privacy ok <sha-256>`.';
  }
}

export const commandDeliveryId = (messageId: string): string => `cmd-${messageId}`;
