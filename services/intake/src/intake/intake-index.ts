import type { DiscordPlace, RecordedEvent } from '@caseloop/contracts';
import { utcDay } from './authorization.decider';

export interface OpenIntent {
  caseId: string;
  deliveryId: string;
  chunkIndex: number;
  nonce: string;
  channelId: string;
  threadId: string | null;
  contentSha256: string;
  intendedAt: string;
}

/** Compares Discord ids numerically (snowflakes grow with time; string order breaks at a new digit). */
export const snowflakeGreater = (a: string, b: string): boolean =>
  a.length !== b.length ? a.length > b.length : a > b;

/**
 * What intake remembers between messages, folded from its own events only (it is the single
 * writer of `*.*.*.intake`): rebuilt from the ledger at start, then kept current as it appends.
 * No I/O here; the loader feeds it.
 */
export class IntakeIndex {
  /** Largest message id seen per channel or thread: where the next delta starts. */
  readonly lastSeen = new Map<string, string>();
  /** Reports per `authorId|YYYY-MM-DD`. */
  readonly reportsByDay = new Map<string, number>();
  /** `authorId|YYYY-MM-DD` already told about the daily ceiling. */
  readonly ceilingNoticed = new Set<string>();
  /** Sources recorded without a confirmed 👀 (a crash between the append and the reaction). */
  readonly unreceipted = new Map<string, DiscordPlace>();
  /** Drops that owe a fixed line that was not confirmed yet. */
  readonly pendingNotices = new Map<
    string,
    { place: DiscordPlace; reason: 'oversized' | 'daily_ceiling'; droppedAt: string }
  >();
  /** Thread id → case id, from the deliveries the outbox confirmed. */
  readonly caseThreads = new Map<string, string>();
  /** Chunks journaled as intended with no outcome yet, by `deliveryId:chunkIndex`. */
  readonly openIntents = new Map<string, OpenIntent>();
  /** Source subject → its last sequence, while a receipt or notice is still owed (then forgotten). */
  readonly sourceSeq = new Map<string, number>();
  /** Sources whose raw text was forgotten (their keys are erased again at start: idempotent). */
  readonly forgotten = new Set<string>();

  seen(channelId: string, messageId: string): void {
    const prev = this.lastSeen.get(channelId);
    if (!prev || snowflakeGreater(messageId, prev)) this.lastSeen.set(channelId, messageId);
  }

  reportsToday(authorId: string, createdAt: string): number {
    return this.reportsByDay.get(`${authorId}|${utcDay(createdAt)}`) ?? 0;
  }

  countReport(authorId: string, createdAt: string, delta: 1 | -1): void {
    const key = `${authorId}|${utcDay(createdAt)}`;
    this.reportsByDay.set(key, Math.max(0, (this.reportsByDay.get(key) ?? 0) + delta));
  }

  apply(e: RecordedEvent): void {
    switch (e.type) {
      case 'SourceReceived': {
        const d = e.data;
        this.seen(d.place.threadId ?? d.place.channelId, d.place.messageId);
        if (!d.place.threadId || !this.caseThreads.has(d.place.threadId))
          this.countReport(d.authorId, d.createdAt, 1);
        this.unreceipted.set(d.sourceId, d.place);
        this.sourceSeq.set(d.sourceId, e.seq);
        return;
      }
      case 'SourceDropped': {
        const d = e.data;
        this.seen(d.place.threadId ?? d.place.channelId, d.place.messageId);
        if (d.notice) this.sourceSeq.set(d.sourceId, e.seq);
        if (d.notice && (d.reason === 'oversized' || d.reason === 'daily_ceiling')) {
          this.pendingNotices.set(d.sourceId, { place: d.place, reason: d.reason, droppedAt: e.occurredAt });
          // The message's own time would be better; ids carry it, and the day is what matters.
          if (d.reason === 'daily_ceiling') this.ceilingNoticed.add(`${d.authorId}|${utcDay(e.occurredAt)}`);
        }
        return;
      }
      case 'SourceForgotten':
        this.forgotten.add(e.data.sourceId);
        return;
      case 'DropNoticeSent':
        this.pendingNotices.delete(e.data.sourceId);
        this.sourceSeq.delete(e.data.sourceId);
        return;
      case 'ReadReceiptAdded':
        this.unreceipted.delete(e.data.sourceId);
        this.sourceSeq.delete(e.data.sourceId);
        return;
      case 'DeliveryIntended': {
        const d = e.data;
        this.openIntents.set(`${d.deliveryId}:${d.chunkIndex}`, {
          caseId: e.aggregateId,
          deliveryId: d.deliveryId,
          chunkIndex: d.chunkIndex,
          nonce: d.nonce,
          channelId: d.channelId,
          threadId: d.threadId,
          contentSha256: d.contentSha256,
          intendedAt: d.intendedAt,
        });
        return;
      }
      case 'DeliveryConfirmed':
        this.openIntents.delete(`${e.data.deliveryId}:${e.data.chunkIndex}`);
        if (e.data.threadId) this.caseThreads.set(e.data.threadId, e.aggregateId);
        return;
      case 'DeliveryRefused':
        this.openIntents.delete(`${e.data.deliveryId}:${e.data.chunkIndex}`);
        return;
      case 'DeltaFetched':
        if (e.data.lastSeenId) this.seen(e.data.channelId, e.data.lastSeenId);
        return;
      default:
        return;
    }
  }
}
