import { createHash } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * A deterministic nonce per (case, delivery, chunk): 25 characters at most (Discord's limit), the
 * same after a restart, different for every other chunk. 24 base32 characters of a sha-256 (120
 * bits). The case is part of it because a delivery id is only unique within its case, while
 * Discord checks `enforce_nonce` per author in any channel ("If another message was created by the
 * same author with the same nonce, that message will be returned"): the same delivery id in two
 * cases' threads must not get the first thread's message back.
 */
export function chunkNonce(caseId: string, deliveryId: string, chunkIndex: number): string {
  const key = `${caseId}\u0000${deliveryId}\u0000${chunkIndex}`;
  return 'c' + base32(createHash('sha256').update(key).digest()).slice(0, 24);
}

/** The nonce of the one fixed line answering a dropped message (oversized, daily ceiling). */
export function noticeNonce(messageId: string): string {
  return 'n' + base32(createHash('sha256').update(`notice\u0000${messageId}`).digest()).slice(0, 24);
}

export const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

function base32(buf: Buffer): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const byte of buf) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}
