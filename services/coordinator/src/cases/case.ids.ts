import { ulidFrom } from '@caseloop/contracts';

/**
 * Deterministic ids. Two coordinators handling the same source event derive the same case id,
 * task id, review id, delivery ids and command ids, so their appends deduplicate on the ledger
 * instead of opening two cases. A stable hash stands in for randomness in `ulidFrom`; the time
 * part keeps case ids sortable by when the report was written.
 */
export function stableBytes(input: string, n = 10): Uint8Array {
  const out = new Uint8Array(n);
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
    h2 ^= h2 >>> 15;
  }
  for (let i = 0; i < n; i++) {
    h1 = Math.imul(h1 ^ (h2 >>> (i % 24)), 0x85ebca6b) >>> 0;
    h1 ^= h1 >>> 13;
    h2 = Math.imul(h2 ^ h1, 0xc2b2ae35) >>> 0;
    h2 ^= h2 >>> 16;
    out[i] = (h1 ^ h2) & 0xff;
  }
  return out;
}

const ms = (iso: string): number => {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : 0;
};

/** The case a source opens, if it opens one: from the source id and the time it was written. */
export const caseIdForSource = (sourceId: string, createdAt: string): string =>
  `C${ulidFrom(ms(createdAt), stableBytes(`case:${sourceId}`))}`;

/** One persistent task id per case, forever. */
export const taskIdForCase = (caseId: string, openedAt: string): string =>
  `T${ulidFrom(ms(openedAt), stableBytes(`task:${caseId}`))}`;

export const reviewIdForSource = (sourceId: string): string =>
  `R${ulidFrom(0, stableBytes(`review:${sourceId}`)).slice(10)}`;

/** Delivery ids name their purpose; the outbox derives Discord nonces from them. */
export const deliveryId = (kind: string, ...parts: string[]): string => {
  const plain = [kind, ...parts].join('-');
  return plain.length <= 120 ? plain : `${kind}-${ulidFrom(0, stableBytes(plain)).slice(10)}`;
};

/** A command id derived from the event that caused it (event ids contain `:`, command ids may not). */
export const commandIdFrom = (prefix: string, eventId: string): string => {
  const plain = `${prefix}-${eventId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return plain.length <= 120 ? plain : `${prefix}-${ulidFrom(0, stableBytes(eventId)).slice(10)}`;
};
