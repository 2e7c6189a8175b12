import { createHash } from 'node:crypto';

/**
 * A fingerprint of message content that survives what Discord (and clients re-rendering a message)
 * do to it: line endings and Unicode normalisation, leading/trailing and repeated whitespace,
 * zero-width characters, the `!` of legacy nickname mentions, a custom emoji's name (only its id
 * identifies it), and emoji variation selectors. It is not a hash of the bytes: two texts that
 * differ only in those respects are the same post. Pure.
 */
export function contentFingerprint(content: string): string {
  const normalised = content
    .normalize('NFC')
    .replace(/\r\n?/g, '\n')
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/\ufe0f/g, '')
    .replace(/<@!(\d+)>/g, '<@$1>')
    .replace(/<(a?):[A-Za-z0-9_~]+:(\d+)>/g, '<$1:e:$2>')
    .replace(/[ \t\u00a0]+$/gm, '')
    .replace(/\s+/g, ' ')
    .trim();
  return createHash('sha256').update(normalised, 'utf8').digest('hex');
}

const DISCORD_EPOCH = 1_420_070_400_000n;

/** When a snowflake was minted (ms since the Unix epoch). */
export const snowflakeMs = (id: string): number => Number((BigInt(id) >> 22n) + DISCORD_EPOCH);

/** The smallest snowflake minted at `ms`: `after=` this lists messages created from then on. */
export const snowflakeAt = (ms: number): string =>
  ((BigInt(Math.max(Number(DISCORD_EPOCH), Math.floor(ms))) - DISCORD_EPOCH) << 22n).toString();
