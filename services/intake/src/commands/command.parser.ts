/**
 * Reviewer commands, written as a whole message inside a case thread (a leading mention of the
 * bot is allowed). A message that merely contains a word like "approve" is not a command.
 */
export type ReviewerCommand =
  | { kind: 'approve' }
  | { kind: 'revise'; text: string }
  | { kind: 'reject'; reason: string }
  | { kind: 'actionable'; note: string | null }
  | { kind: 'same'; reviewId: string }
  | { kind: 'different'; reviewId: string }
  | { kind: 'privacy-ok'; sha256: string };

export type CommandName = ReviewerCommand['kind'];

export type ParsedCommand =
  | { status: 'command'; command: ReviewerCommand }
  /** It starts like a command but its argument is missing or wrong: answered, never treated as a report. */
  | { status: 'malformed'; name: CommandName; problem: string }
  | { status: 'not_a_command' };

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const SHA256 = /^[0-9a-f]{64}$/;

export function parseCommand(raw: string, selfId: string): ParsedCommand {
  const text = raw.replace(new RegExp(`^\\s*<@!?${selfId}>`), '').trim();
  const m = /^([a-z]+(?: ok)?)\s*(:?)\s*([\s\S]*)$/i.exec(text);
  if (!m) return { status: 'not_a_command' };
  const word = (m[1] as string).toLowerCase();
  const colon = m[2] === ':';
  const arg = (m[3] as string).trim();
  switch (word) {
    case 'approve':
    case 'approved':
      return arg === '' ? ok({ kind: 'approve' }) : { status: 'not_a_command' };
    case 'revise':
      if (!colon)
        return arg === ''
          ? malformed('revise', 'write `revise: <what to change>`')
          : { status: 'not_a_command' };
      return arg
        ? ok({ kind: 'revise', text: arg.slice(0, 4000) })
        : malformed('revise', 'the revision text is empty');
    case 'reject':
      if (!colon)
        return arg === '' ? malformed('reject', 'write `reject: <reason>`') : { status: 'not_a_command' };
      return arg
        ? ok({ kind: 'reject', reason: arg.slice(0, 4000) })
        : malformed('reject', 'the reason is empty');
    case 'actionable':
      if (arg === '') return ok({ kind: 'actionable', note: null });
      return colon ? ok({ kind: 'actionable', note: arg.slice(0, 4000) }) : { status: 'not_a_command' };
    case 'same':
    case 'different': {
      const id = arg.split(/\s+/)[0] ?? '';
      if (arg === '' || arg.split(/\s+/).length > 1 || !SAFE_ID.test(id)) {
        return arg === '' || colon
          ? malformed(word, `write \`${word} <review id>\``)
          : { status: 'not_a_command' };
      }
      return ok({ kind: word, reviewId: id });
    }
    case 'privacy ok': {
      const sha = arg.toLowerCase();
      return SHA256.test(sha)
        ? ok({ kind: 'privacy-ok', sha256: sha })
        : malformed('privacy-ok', 'write `privacy ok <sha-256 of the artifact>`');
    }
    default:
      return { status: 'not_a_command' };
  }
}

const ok = (command: ReviewerCommand): ParsedCommand => ({ status: 'command', command });
const malformed = (name: CommandName, problem: string): ParsedCommand => ({
  status: 'malformed',
  name,
  problem,
});
