import type { PermissionOverwrite } from './permissions';
import type { ChannelMode, ParsedSeed, Persona } from './seed';
import type { SnowflakeMint } from './snowflake';

/** The local Discord's records, the gateway events it reports, and the constants both share. */

/** Gateway intent bits this stand-in filters on. */
export const Intents = {
  Guilds: 1 << 0,
  GuildMembers: 1 << 1,
  GuildPresences: 1 << 8,
  GuildMessages: 1 << 9,
  GuildMessageReactions: 1 << 10,
  GuildMessageTyping: 1 << 11,
  MessageContent: 1 << 15,
} as const;

export const PRIVILEGED_INTENTS = Intents.GuildMembers | Intents.GuildPresences | Intents.MessageContent;

/** Message types this stand-in creates (Message resource, "Message Types"). */
export const MESSAGE_TYPE = {
  default: 0,
  channelNameChange: 4,
  threadCreated: 18,
  reply: 19,
  threadStarterMessage: 21,
} as const;
export const CHANNEL_TYPE = {
  guildText: 0,
  announcementThread: 10,
  publicThread: 11,
  privateThread: 12,
} as const;
export type ThreadType = typeof CHANNEL_TYPE.publicThread | typeof CHANNEL_TYPE.privateThread;
export const MESSAGE_FLAG_HAS_THREAD = 1 << 5;

export type Json = Record<string, unknown>;

export interface UserRecord {
  id: string;
  username: string;
  globalName: string | null;
  persona: Persona | 'bot';
  bot: boolean;
  roleIds: string[];
  joinedAt: string;
}

export interface RoleRecord {
  id: string;
  name: string;
  color: number;
  position: number;
  permissions: string;
  managed: boolean;
}

export interface ChannelRecord {
  id: string;
  name: string;
  topic: string | null;
  position: number;
  mode: ChannelMode | null;
  lastMessageId: string | null;
  /** Keyed by role or member id, in the order they were set. */
  overwrites: Map<string, PermissionOverwrite>;
}

export interface ThreadRecord {
  id: string;
  type: ThreadType;
  /** Private threads only: whether non-moderators may add other non-moderators. */
  invitable: boolean;
  parentId: string;
  name: string;
  ownerId: string;
  createdAt: string;
  autoArchiveDuration: number;
  archived: boolean;
  /** When the archive status last changed (its creation until then): `archive_timestamp`. */
  archiveChangedAt: string;
  locked: boolean;
  lastMessageId: string | null;
  messageCount: number;
  totalMessageSent: number;
  memberIds: Set<string>;
}

export interface AttachmentRecord {
  id: string;
  filename: string;
  size: number;
  contentType: string | null;
  url: string;
}

export interface WebhookAuthor {
  id: string;
  username: string;
}

export interface MessageRecord {
  id: string;
  channelId: string;
  authorId: string;
  webhook: WebhookAuthor | null;
  content: string;
  nonce: string | number | null;
  type: number;
  mentionIds: string[];
  mentionRoleIds: string[];
  mentionEveryone: boolean;
  attachments: AttachmentRecord[];
  embeds: Json[];
  components: Json[];
  /** The message this one points at (a reply's, a thread starter message's), if any. */
  referenceId: string | null;
  /**
   * The channel of `message_reference` when it is not the message's own: a thread starter message
   * points at its parent channel, a thread-created message at the thread.
   */
  referenceChannelId: string | null;
  threadId: string | null;
  flags: number;
  tts: boolean;
  editedAt: string | null;
}

export interface ReactionRecord {
  emoji: { id: string | null; name: string };
  userIds: string[];
}

/** One gateway dispatch: the event name, its payload, and the intent a session needs to receive it. */
export interface WorldEvent {
  t: string;
  d: Json;
  intent: number | null;
  /** Present for message events: gateway sessions without MESSAGE_CONTENT get it redacted. */
  message?: MessageRecord;
}

export interface PostMessageInput {
  channelId: string;
  authorId: string;
  content?: string;
  nonce?: string | number | null;
  enforceNonce?: boolean;
  tts?: boolean;
  embeds?: Json[];
  components?: Json[];
  stickerIds?: string[];
  attachments?: Omit<AttachmentRecord, 'id' | 'url'>[];
  allowedMentions?: unknown;
  messageReference?: { message_id?: unknown; channel_id?: unknown; fail_if_not_exists?: unknown } | null;
  webhook?: WebhookAuthor;
}

export interface WorldOptions {
  seed: ParsedSeed;
  mint: SnowflakeMint;
  dedupeWindowMs: number;
  messageContentIntent: boolean;
  now: () => number;
  attachmentUrl: (channelId: string, attachmentId: string, filename: string) => string;
}
