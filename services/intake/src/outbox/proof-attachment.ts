import { createHash } from 'node:crypto';
import type { RecordedEvent } from '@caseloop/contracts';

/** What Discord lets a bot attach to one message in a guild without boosts. */
export const DISCORD_ATTACHMENT_LIMIT_BYTES = 10 * 1024 * 1024;

export interface ProofFile {
  name: string;
  data: Buffer;
  contentType: string;
}

export interface ProofCandidate {
  /** The stable evidence link as it appears in the receipt's text. */
  url: string;
  sha256: string;
}

/**
 * The screenshot a receipt may show inline: the first shareable (privacy-reviewed, cleared or
 * approved) screenshot its ReceiptBuilt lists, and the link to it the receipt's text carries.
 * Null when the receipt has none, or its text carries no link to it (nothing is attached that a
 * reader could not also open). Pure.
 */
export function proofCandidate(
  events: readonly RecordedEvent[],
  receiptId: string | null,
  content: string,
): ProofCandidate | null {
  if (!receiptId) return null;
  const receipt = events.find(
    (e): e is RecordedEvent<'ReceiptBuilt'> => e.type === 'ReceiptBuilt' && e.data.receiptId === receiptId,
  );
  const shot = receipt?.data.evidence.find((x) => x.kind === 'screenshot' && x.shareable);
  if (!shot) return null;
  const escaped = shot.key.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const url = new RegExp(`<(https?://[^\\s<>]+/evidence/${escaped})>`).exec(content)?.[1];
  return url ? { url, sha256: shot.sha256 } : null;
}

/**
 * Reads the capture through the evidence service's stable link (intake holds no storage
 * credentials: it follows the same short-lived redirect a reviewer's browser would) and returns it
 * only if it is a PNG or JPEG within `maxBytes` whose sha-256 is the one the receipt names.
 * Anything else — too large, unreachable, altered — is null: the receipt keeps its link instead.
 */
export async function fetchProof(
  candidate: ProofCandidate,
  maxBytes: number,
  timeoutMs = 10_000,
): Promise<ProofFile | { skipped: 'too_large' | 'unavailable' | 'mismatch' }> {
  let res: Response;
  try {
    res = await fetch(candidate.url, { redirect: 'follow', signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    return { skipped: 'unavailable' };
  }
  if (!res.ok) return { skipped: 'unavailable' };
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return { skipped: 'too_large' };
  }
  const data = Buffer.from(await res.arrayBuffer());
  if (data.length > maxBytes) return { skipped: 'too_large' };
  if (createHash('sha256').update(data).digest('hex') !== candidate.sha256) return { skipped: 'mismatch' };
  const png = data.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex'));
  const jpeg = data[0] === 0xff && data[1] === 0xd8;
  if (!png && !jpeg) return { skipped: 'mismatch' };
  return {
    name: `capture-${candidate.sha256.slice(0, 12)}.${png ? 'png' : 'jpg'}`,
    data,
    contentType: png ? 'image/png' : 'image/jpeg',
  };
}
