import { DiscordPlace, RecordedEvent } from '@caseloop/contracts';
import { commandDeliveryId, commandRefusalLine } from '../commands/command.replies';
import { linkReviewButtons, receiptButtons } from '../commands/decision-components';
import { statusDeliveryId, statusPlaceholder } from '../status/case-status';

export interface OutboxOptions {
  replyChunkSize: number;
  /** How long Discord is trusted to deduplicate a nonce; outside it an unresolved post is refused, never re-sent. */
  dedupeWindowMs: number;
  /** How many recent messages reconciliation reads back. */
  reconcileFetchLimit: number;
  /** Largest capture attached to a receipt inline (default Discord's 10 MiB); larger ones stay a link. */
  maxAttachmentBytes?: number;
}

export interface DeliverySpec {
  caseId: string;
  deliveryId: string;
  sourceId: string;
  place: DiscordPlace;
  content: string;
  causationId: string | null;
  correlationId: string;
  /** Display name of a thread created for this case. */
  threadName: string;
  /** What the coordinator asked for (a receipt and a link review get decision buttons). */
  kind?: DeliveryKind;
  receiptId?: string | null;
}

export type DeliveryKind = RecordedEvent<'DeliveryRequested'>['data']['kind'];

/** A coordinator's DeliveryRequested as a delivery. */
export function specFromRequest(e: RecordedEvent<'DeliveryRequested'>): DeliverySpec {
  return {
    caseId: e.aggregateId,
    deliveryId: e.data.deliveryId,
    sourceId: e.data.sourceId,
    place: e.data.place,
    content: e.data.content,
    causationId: e.eventId,
    correlationId: e.correlationId,
    threadName: `Case ${e.aggregateId}`,
    kind: e.data.kind,
    receiptId: e.data.receiptId,
  };
}

/** Rebuilds what a delivery was meant to say from the case's own events. */
export function specFromLedger(
  caseId: string,
  deliveryId: string,
  events: RecordedEvent[],
): DeliverySpec | null {
  if (deliveryId === statusDeliveryId(caseId)) {
    const opened = events.find((e): e is RecordedEvent<'CaseOpened'> => e.type === 'CaseOpened');
    return opened
      ? {
          caseId,
          deliveryId,
          sourceId: opened.data.sourceId,
          place: opened.data.place,
          content: statusPlaceholder(caseId),
          causationId: null,
          correlationId: opened.data.sourceId,
          threadName: `Case ${caseId}`,
          kind: 'notice',
        }
      : null;
  }
  for (const e of events) {
    if (e.type === 'DeliveryRequested' && e.data.deliveryId === deliveryId) {
      return {
        caseId,
        deliveryId,
        sourceId: e.data.sourceId,
        place: e.data.place,
        content: e.data.content,
        causationId: e.eventId,
        correlationId: e.correlationId,
        threadName: `Case ${caseId}`,
        kind: e.data.kind,
        receiptId: e.data.receiptId,
      };
    }
    if (e.type === 'CommandRefused' && commandDeliveryId(e.data.messageId) === deliveryId) {
      const intent = events.find((x) => x.type === 'DeliveryIntended' && x.data.deliveryId === deliveryId);
      if (!intent || intent.type !== 'DeliveryIntended') return null;
      return {
        caseId,
        deliveryId,
        sourceId: intent.data.sourceId,
        place: {
          guildId: '0',
          channelId: intent.data.channelId,
          threadId: intent.data.threadId,
          messageId: e.data.messageId,
        },
        content: commandRefusalLine(e.data.reason),
        causationId: e.eventId,
        correlationId: e.correlationId,
        threadName: `Case ${caseId}`,
      };
    }
  }
  return null;
}

/**
 * The decision row under a delivery's last chunk: Approve / Request changes / Reject on a receipt,
 * Same case / Different on a link review (the review still pending for the delivery's source).
 * The text commands stay valid; the buttons only spare typing them.
 */
export function decisionButtons(spec: DeliverySpec, events: readonly RecordedEvent[]): unknown[] {
  if (spec.kind === 'receipt') return receiptButtons(spec.receiptId ?? null);
  if (spec.kind !== 'link_review') return [];
  const settled = new Set(events.flatMap((e) => (e.type === 'LinkReviewSettled' ? [e.data.reviewId] : [])));
  const review = events
    .filter(
      (e): e is RecordedEvent<'LinkReviewRequested'> =>
        e.type === 'LinkReviewRequested' &&
        e.data.sourceId === spec.sourceId &&
        !settled.has(e.data.reviewId),
    )
    .at(-1);
  return review ? linkReviewButtons(review.data.reviewId) : [];
}
