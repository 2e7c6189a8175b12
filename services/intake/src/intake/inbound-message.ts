import { z } from 'zod';
import type { AttachmentRef } from '@caseloop/contracts';

/**
 * A Discord message as it crosses into intake, from the gateway (MESSAGE_CREATE) or from REST
 * (the delta fetch). Only the fields intake reads are validated; the rest is ignored.
 */
const snowflake = z.string().regex(/^\d{1,25}$/);

export const discordMessagePayload = z.object({
  id: snowflake,
  channel_id: snowflake,
  guild_id: snowflake.optional(),
  type: z.number().int(),
  content: z.string(),
  timestamp: z.string(),
  author: z.object({ id: snowflake, bot: z.boolean().optional(), system: z.boolean().optional() }),
  webhook_id: snowflake.optional().nullable(),
  mentions: z.array(z.object({ id: snowflake })).default([]),
  member: z.object({ roles: z.array(snowflake) }).optional(),
  attachments: z
    .array(
      z.object({
        id: snowflake,
        filename: z.string(),
        content_type: z.string().optional().nullable(),
        size: z.number().int().nonnegative(),
        url: z.string(),
      }),
    )
    .default([]),
});
export type DiscordMessagePayload = z.infer<typeof discordMessagePayload>;

export interface InboundMessage {
  id: string;
  channelId: string;
  /** Null when the payload carried none (REST messages); the channel then tells the guild. */
  guildId: string | null;
  type: number;
  content: string;
  createdAt: string;
  authorId: string;
  authorIsBot: boolean;
  authorIsSystem: boolean;
  webhookId: string | null;
  mentionIds: string[];
  /** Null when the payload had no member (REST messages): roles are looked up when needed. */
  memberRoles: string[] | null;
  attachments: AttachmentRef[];
}

export function toInbound(p: DiscordMessagePayload): InboundMessage {
  return {
    id: p.id,
    channelId: p.channel_id,
    guildId: p.guild_id ?? null,
    type: p.type,
    content: p.content,
    createdAt: new Date(p.timestamp).toISOString(),
    authorId: p.author.id,
    authorIsBot: p.author.bot === true,
    authorIsSystem: p.author.system === true,
    webhookId: p.webhook_id ?? null,
    mentionIds: p.mentions.map((m) => m.id),
    memberRoles: p.member?.roles ?? null,
    attachments: p.attachments.map((a) => ({
      id: a.id,
      name: a.filename.slice(0, 1024),
      contentType: a.content_type ? a.content_type.slice(0, 255) : null,
      size: a.size,
      url: a.url,
    })),
  };
}
