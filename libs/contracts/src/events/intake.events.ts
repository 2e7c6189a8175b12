import { z } from 'zod';
import { defineEvent } from '../define-event';
import { sanitizeReport } from '@caseloop/privacy';
import { attachmentRef, discordPlace, isoTime, safeId, sha256Hex, snowflake } from './shared.schemas';

/** Intake owns the Discord connection both ways: what came in, and what was delivered. */

const sourceReceivedV1 = z.object({
  sourceId: safeId,
  place: discordPlace,
  authorId: snowflake,
  authorIsReviewer: z.boolean(),
  content: z.string().max(16_000),
  attachments: z.array(attachmentRef).max(25),
  mentionedBot: z.boolean(),
  createdAt: isoTime,
  via: z.enum(['gateway', 'delta']),
});

const base64 = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'not base64');

/**
 * The reporter's raw text, encrypted with AES-256-GCM under a key of its own that lives outside the
 * stream (the source key bucket, entry `keyId`); the source id is the additional authenticated data.
 * Deleting the key forgets the text: the stream stays append-only and keeps only the redacted copy.
 */
export const sealedText = z.object({
  keyId: z.string().regex(/^[A-Za-z0-9_.-]{1,160}$/, 'not a key id'),
  iv: base64(16).min(16),
  tag: base64(24).min(24),
  ciphertext: base64(86_000),
});
export type SealedText = z.infer<typeof sealedText>;

/** Characters other than white space: what the share of a report surviving redaction is measured in. */
export const visibleChars = (text: string): number => text.replace(/\s+/g, '').length;

export const SourceReceived = defineEvent({
  type: 'SourceReceived',
  version: 2,
  producer: 'intake',
  aggregate: 'source',
  description:
    'One authorized Discord message, recorded exactly once forever (first event of its source subject). ' +
    '`content` is redacted; the raw text is only in `sealed`, readable while its key exists.',
  schema: sourceReceivedV1.extend({
    /** The message as sanitizeReport leaves it: credentials, personal data and private text are markers. */
    content: z.string().max(20_000),
    /** visibleChars of the raw text: the share that survived redaction is measured against it. */
    rawChars: z.number().int().nonnegative(),
    /** Null when the raw text was never kept (events recorded before v2: their raw text is not readable). */
    sealed: sealedText.nullable(),
  }),
  upcasters: {
    // v1 carried the raw text as `content`. Readers get the redacted text; the raw text is not kept.
    1: (data) => {
      const d = data as z.infer<typeof sourceReceivedV1>;
      return {
        ...d,
        content: sanitizeReport(d.content).brief,
        rawChars: visibleChars(d.content),
        sealed: null,
      };
    },
  },
});

export const SourceForgotten = defineEvent({
  type: 'SourceForgotten',
  producer: 'intake',
  aggregate: 'source',
  description:
    "The source's raw text was forgotten: its key was deleted (the message was deleted in Discord, or an operator asked). " +
    'The redacted copy stays; nothing is removed from the stream.',
  schema: z.object({
    sourceId: safeId,
    /** The key that was deleted; null when the source had no sealed text. */
    keyId: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,160}$/)
      .nullable(),
    reason: z.enum(['message_deleted', 'operator']),
  }),
});

export const SourceDropped = defineEvent({
  type: 'SourceDropped',
  producer: 'intake',
  aggregate: 'source',
  description: 'A message that did not pass authorization or limits. Ids and the reason only: no content.',
  schema: z.object({
    sourceId: safeId,
    place: discordPlace,
    authorId: snowflake,
    reason: z.enum([
      'wrong_guild',
      'channel_not_bound',
      'author_is_bot',
      'author_is_webhook',
      'author_is_self',
      'author_not_listed',
      'not_mentioned',
      'oversized',
      'daily_ceiling',
      'empty',
      'system_message',
    ]),
    via: z.enum(['gateway', 'delta']),
    /** The author gets one fixed line (oversized; the daily ceiling once per UTC day). Absent in older events: false. */
    notice: z.boolean().optional(),
  }),
});

export const DropNoticeSent = defineEvent({
  type: 'DropNoticeSent',
  producer: 'intake',
  aggregate: 'source',
  description:
    'The one fixed line answering a dropped message was confirmed by Discord (nonce-deduplicated).',
  schema: z.object({
    sourceId: safeId,
    reason: z.enum(['oversized', 'daily_ceiling']),
    discordMessageId: snowflake,
  }),
});

export const ReadReceiptAdded = defineEvent({
  type: 'ReadReceiptAdded',
  producer: 'intake',
  aggregate: 'source',
  description: 'The 👀 reaction was confirmed on the source message after its SourceReceived was durable.',
  schema: z.object({ sourceId: safeId, messageId: snowflake, emoji: z.string().min(1).max(32) }),
});

const deliveryKey = {
  deliveryId: safeId,
  chunkIndex: z.number().int().nonnegative(),
  sourceId: safeId,
};

export const DeliveryIntended = defineEvent({
  type: 'DeliveryIntended',
  producer: 'intake',
  aggregate: 'case',
  description: 'Journaled before a chunk is posted: the outbox knows what it was about to do after a crash.',
  schema: z.object({
    ...deliveryKey,
    chunkCount: z.number().int().positive(),
    nonce: z.string().min(1).max(25),
    channelId: snowflake,
    threadId: snowflake.nullable(),
    contentSha256: sha256Hex,
    length: z.number().int().min(1).max(2000),
    intendedAt: isoTime,
  }),
});

export const DeliveryConfirmed = defineEvent({
  type: 'DeliveryConfirmed',
  producer: 'intake',
  aggregate: 'case',
  description: 'Discord answered with the message it stored for this chunk (or reconciliation found it).',
  schema: z.object({
    ...deliveryKey,
    discordMessageId: snowflake,
    channelId: snowflake,
    threadId: snowflake.nullable(),
    reconciled: z.boolean(),
  }),
});

export const DeliveryRefused = defineEvent({
  type: 'DeliveryRefused',
  producer: 'intake',
  aggregate: 'case',
  description:
    'A chunk that will not be posted (too long, Discord refused, or ambiguous outside the dedupe window).',
  schema: z.object({
    ...deliveryKey,
    reason: z.enum([
      'too_long',
      'discord_error',
      'ambiguous_outside_window',
      'channel_gone',
      'previous_chunk_unconfirmed',
      /** Discord answered 10008 to the nonce: the message posted with it was deleted. */
      'message_deleted',
      /** The thread is locked: only a moderator can post or unarchive it. */
      'thread_locked',
    ]),
    detail: z.string().max(500),
  }),
});

const reviewer = { reviewerId: snowflake, messageId: snowflake };

export const ReviewerDecided = defineEvent({
  type: 'ReviewerDecided',
  producer: 'intake',
  aggregate: 'case',
  description:
    'An allowlisted reviewer approved, asked for a revision (with text) or rejected (with a reason).',
  schema: z.object({
    ...reviewer,
    decision: z.enum(['approve', 'revise', 'reject']),
    text: z.string().max(4000).nullable(),
  }),
});

export const LinkReviewSettled = defineEvent({
  type: 'LinkReviewSettled',
  producer: 'intake',
  aggregate: 'case',
  description: 'A reviewer said whether a held report is the same case or a different one.',
  schema: z.object({ ...reviewer, reviewId: safeId, verdict: z.enum(['same', 'different']) }),
});

export const CaseMadeActionable = defineEvent({
  type: 'CaseMadeActionable',
  producer: 'intake',
  aggregate: 'case',
  description: 'A reviewer turned a feedback (or held) case into engineering work.',
  schema: z.object({ ...reviewer, note: z.string().max(4000).nullable() }),
});

export const PrivacyApproved = defineEvent({
  type: 'PrivacyApproved',
  producer: 'intake',
  aggregate: 'case',
  description: 'A reviewer cleared an artifact (a screenshot not taken on fixture data) for sharing.',
  schema: z.object({ ...reviewer, artifactSha256: sha256Hex }),
});

export const CommandRefused = defineEvent({
  type: 'CommandRefused',
  producer: 'intake',
  aggregate: 'case',
  description: 'A command in a case thread from someone who may not give it. Ids and reason only.',
  schema: z.object({
    authorId: snowflake,
    messageId: snowflake,
    command: z.enum([
      'approve',
      'revise',
      'reject',
      'actionable',
      'same',
      'different',
      'privacy-ok',
      'unknown',
    ]),
    reason: z.enum(['not_a_reviewer', 'not_applicable', 'malformed']),
  }),
});

export const DeltaFetched = defineEvent({
  type: 'DeltaFetched',
  producer: 'intake',
  aggregate: 'ops',
  description: 'Intake fetched the messages missed while the gateway was away, per channel or thread.',
  schema: z.object({
    requestId: safeId.nullable(),
    channelId: snowflake,
    afterId: snowflake.nullable(),
    lastSeenId: snowflake.nullable(),
    fetched: z.number().int().nonnegative(),
    recorded: z.number().int().nonnegative(),
  }),
});

export const intakeEvents = [
  SourceReceived,
  SourceForgotten,
  SourceDropped,
  DropNoticeSent,
  ReadReceiptAdded,
  DeliveryIntended,
  DeliveryConfirmed,
  DeliveryRefused,
  ReviewerDecided,
  LinkReviewSettled,
  CaseMadeActionable,
  PrivacyApproved,
  CommandRefused,
  DeltaFetched,
] as const;
