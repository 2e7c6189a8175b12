import { ContractError } from './errors';

/**
 * Ids become NATS subject tokens and file names (worktrees, branches, S3 keys), so they are
 * validated in one place: letters, digits, `_` and `-`, starting with a letter or digit, at most 128.
 * No `.`, `*`, `>`, `/`, whitespace or shell metacharacters can pass.
 */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export const isSafeId = (value: unknown): value is string => typeof value === 'string' && SAFE_ID.test(value);

export function assertSafeId(kind: string, value: unknown): string {
  if (!isSafeId(value)) {
    const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : typeof value;
    throw new ContractError('unsafe_id', `${kind} must match ${SAFE_ID.source}, got ${shown}`, { kind });
  }
  return value;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID from a time and 16 bytes of randomness supplied by the caller: deciders stay pure
 * because ids and clocks arrive with the command.
 */
export function ulidFrom(timeMs: number, random: Uint8Array): string {
  if (random.length < 10) throw new RangeError('ulidFrom needs at least 10 random bytes');
  let time = '';
  let t = Math.floor(timeMs);
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let bits = 0;
  let acc = 0;
  let rand = '';
  for (let i = 0; i < 10; i++) {
    acc = (acc << 8) | (random[i] as number);
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      rand += CROCKFORD[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return time + rand;
}

/** Case ids are `C` + ULID; task ids `T` + ULID; source ids are derived from the source system. */
export const caseIdFrom = (ulid: string): string => assertSafeId('caseId', `C${ulid}`);
export const taskIdFrom = (ulid: string): string => assertSafeId('taskId', `T${ulid}`);

/** One Discord message is one source forever: its id is derived from the message id alone. */
export const discordSourceId = (messageId: string): string => {
  if (!/^\d{1,25}$/.test(messageId)) {
    throw new ContractError('unsafe_id', 'a Discord message id is a snowflake of digits', {
      kind: 'messageId',
    });
  }
  return `discord-${messageId}`;
};
