import type { RecordedEvent } from '@caseloop/contracts';

export type ChunkProgress =
  | { status: 'none' }
  | {
      status: 'intended';
      nonce: string;
      channelId: string;
      threadId: string | null;
      contentSha256: string;
      intendedAt: string;
    }
  | { status: 'confirmed'; discordMessageId: string; threadId: string | null }
  | { status: 'refused'; reason: string };

/** Folds one delivery's chunk outcomes out of its case's events. Pure. */
export function deliveryProgress(
  events: readonly RecordedEvent[],
  deliveryId: string,
): Map<number, ChunkProgress> {
  const progress = new Map<number, ChunkProgress>();
  for (const e of events) {
    switch (e.type) {
      case 'DeliveryIntended':
        if (
          e.data.deliveryId === deliveryId &&
          (progress.get(e.data.chunkIndex)?.status ?? 'none') === 'none'
        ) {
          const d = e.data;
          progress.set(d.chunkIndex, {
            status: 'intended',
            nonce: d.nonce,
            channelId: d.channelId,
            threadId: d.threadId,
            contentSha256: d.contentSha256,
            intendedAt: d.intendedAt,
          });
        }
        break;
      case 'DeliveryConfirmed':
        if (e.data.deliveryId === deliveryId)
          progress.set(e.data.chunkIndex, {
            status: 'confirmed',
            discordMessageId: e.data.discordMessageId,
            threadId: e.data.threadId,
          });
        break;
      case 'DeliveryRefused':
        if (e.data.deliveryId === deliveryId)
          progress.set(e.data.chunkIndex, { status: 'refused', reason: e.data.reason });
        break;
      default:
        break;
    }
  }
  return progress;
}

export type DeliveryStep =
  | { kind: 'done' }
  | { kind: 'post'; index: number }
  /** A chunk was journaled but has no outcome: find out whether Discord has it before anything else. */
  | { kind: 'reconcile'; index: number }
  | { kind: 'refuse'; index: number; reason: 'too_long' | 'previous_chunk_unconfirmed' };

/**
 * The outbox's decision for the next chunk. Chunks go strictly in order; a chunk that ends
 * refused stops the rest (each of them is refused in turn, so the delivery always ends resolved).
 */
export function nextDeliveryStep(
  chunks: readonly string[],
  progress: ReadonlyMap<number, ChunkProgress>,
  limit: number,
): DeliveryStep {
  let blocked = false;
  for (let i = 0; i < chunks.length; i++) {
    const p = progress.get(i) ?? { status: 'none' };
    switch (p.status) {
      case 'confirmed':
        continue;
      case 'refused':
        blocked = true;
        continue;
      case 'intended':
        return { kind: 'reconcile', index: i };
      case 'none':
        if (blocked) return { kind: 'refuse', index: i, reason: 'previous_chunk_unconfirmed' };
        if ((chunks[i] as string).length > limit) return { kind: 'refuse', index: i, reason: 'too_long' };
        return { kind: 'post', index: i };
    }
  }
  return { kind: 'done' };
}
