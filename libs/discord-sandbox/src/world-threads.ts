import { DiscordApiError, invalidForm } from './errors';
import type { WorldContext } from './world-context';
import {
  CHANNEL_TYPE,
  Intents,
  MESSAGE_FLAG_HAS_THREAD,
  MESSAGE_TYPE,
  type MessageRecord,
  type ThreadRecord,
  type ThreadType,
} from './world-types';

/** Threads: started from a message (public) or on their own (public or private), archived, locked. */
export class WorldThreads {
  constructor(private readonly ctx: WorldContext) {}

  setThreadArchived(threadId: string, archived: boolean): ThreadRecord {
    const thread = this.ctx.guild.thread(threadId);
    if (thread.archived === archived) return thread;
    thread.archived = archived;
    thread.archiveChangedAt = new Date(this.ctx.options.now()).toISOString();
    this.ctx.emit({ t: 'THREAD_UPDATE', d: this.ctx.render.renderThread(thread), intent: Intents.Guilds });
    return thread;
  }

  /** A moderator locked (or unlocked) the thread: nobody without Manage Threads may post or unarchive it. */
  setThreadLocked(threadId: string, locked: boolean): ThreadRecord {
    const thread = this.ctx.guild.thread(threadId);
    if (thread.locked === locked) return thread;
    thread.locked = locked;
    this.ctx.emit({ t: 'THREAD_UPDATE', d: this.ctx.render.renderThread(thread), intent: Intents.Guilds });
    return thread;
  }

  /**
   * Modify Thread (`PATCH /channels/{thread}`), as the Threads topic ("Editing & Deleting Threads")
   * sets it out: unarchiving needs only membership of the thread; a locked thread is unarchived
   * only with MANAGE_THREADS ("Active & Archived Threads"); `name` and `auto_archive_duration`
   * need MANAGE_THREADS or being its creator; `locked` needs MANAGE_THREADS. An archived thread
   * takes no other change unless it is unarchived by the same request (50083).
   */
  modifyThread(
    threadId: string,
    actorId: string,
    manageThreads: boolean,
    payload: Record<string, unknown>,
  ): ThreadRecord {
    const thread = this.ctx.guild.thread(threadId);
    const { archived, locked, name, auto_archive_duration: duration } = payload;
    if (archived !== undefined && typeof archived !== 'boolean')
      throw invalidForm(['archived'], 'BASE_TYPE_BAD_TYPE', 'Must be either true or false.');
    if (locked !== undefined && typeof locked !== 'boolean')
      throw invalidForm(['locked'], 'BASE_TYPE_BAD_TYPE', 'Must be either true or false.');
    const creatorOrModerator = manageThreads || thread.ownerId === actorId;
    if (archived === false && thread.archived) {
      if (thread.locked ? !manageThreads : !thread.memberIds.has(actorId) && !manageThreads)
        throw new DiscordApiError('missingPermissions');
    } else if (archived === true && !thread.archived && !creatorOrModerator) {
      throw new DiscordApiError('missingPermissions');
    }
    if (locked !== undefined && locked !== thread.locked && !manageThreads)
      throw new DiscordApiError('missingPermissions');
    if ((name !== undefined || duration !== undefined) && !creatorOrModerator)
      throw new DiscordApiError('missingPermissions');
    const staysArchived = archived === undefined ? thread.archived : archived;
    if (
      thread.archived &&
      staysArchived &&
      (name !== undefined || duration !== undefined || locked !== undefined)
    )
      throw new DiscordApiError('threadArchived');
    let renamed = false;
    if (name !== undefined || duration !== undefined) {
      const v = validateThread(name ?? thread.name, duration ?? thread.autoArchiveDuration);
      renamed = v.threadName !== thread.name;
      thread.name = v.threadName;
      thread.autoArchiveDuration = v.duration;
    }
    if (typeof locked === 'boolean') thread.locked = locked;
    if (typeof archived === 'boolean' && archived !== thread.archived) {
      this.setThreadArchived(threadId, archived);
    } else {
      this.ctx.emit({ t: 'THREAD_UPDATE', d: this.ctx.render.renderThread(thread), intent: Intents.Guilds });
    }
    // A new name is announced in the thread by a CHANNEL_NAME_CHANGE (4) message of whoever renamed
    // it, its content the new name (Message resource, "Message Types"): a system message that a
    // person's id authors and that carries words.
    if (renamed)
      this.postSystemMessage(thread.id, actorId, MESSAGE_TYPE.channelNameChange, thread.name, {
        messageId: null,
        channelId: thread.id,
      });
    return thread;
  }

  /**
   * Start Thread from Message: a public thread whose id is the message's. As the Threads topic
   * ("New Message Types") and the Message resource ("Thread Created messages", "Thread starter
   * messages") describe it, Discord then posts two system messages: THREAD_CREATED (18) in the
   * parent channel — content the thread's name, `message_reference` the thread — because the
   * starter is an "older message" (a threshold Discord sets "to a very small value"; here every
   * message already posted is older), and THREAD_STARTER_MESSAGE (21) as the thread's first
   * message, with no content and a `message_reference` to the starter message. Both are
   * dispatched as MESSAGE_CREATE.
   */
  startThreadFromMessage(
    channelId: string,
    messageId: string,
    name: unknown,
    ownerId: string,
    autoArchiveDuration: unknown,
  ): ThreadRecord {
    const { guild, store, render } = this.ctx;
    const target = guild.messageable(channelId);
    if (target.kind !== 'channel') throw new DiscordApiError('wrongChannelType');
    const message = store.message(channelId, messageId);
    const { threadName, duration } = validateThread(name, autoArchiveDuration);
    if (message.threadId || guild.threads.has(message.id)) throw new DiscordApiError('threadAlreadyCreated');
    const thread = this.openThread(
      message.id,
      CHANNEL_TYPE.publicThread,
      channelId,
      threadName,
      ownerId,
      duration,
    );
    message.threadId = thread.id;
    message.flags |= MESSAGE_FLAG_HAS_THREAD;
    this.ctx.emit({
      t: 'MESSAGE_UPDATE',
      d: render.renderMessage(message, { gateway: true }),
      intent: Intents.GuildMessages,
      message,
    });
    this.postSystemMessage(channelId, ownerId, MESSAGE_TYPE.threadCreated, thread.name, {
      messageId: null,
      channelId: thread.id,
    });
    this.postSystemMessage(thread.id, ownerId, MESSAGE_TYPE.threadStarterMessage, '', {
      messageId: message.id,
      channelId,
    });
    return thread;
  }

  /**
   * Start Thread without Message (`POST /channels/{id}/threads`): it gets a fresh id. `type`
   * "currently defaults to PRIVATE_THREAD" (Channel resource, Start Thread without Message); a
   * public one is announced in the parent with a THREAD_CREATED (18) message (Message resource,
   * "Thread Created messages"), a private one is not. Announcement threads (10) belong to
   * announcement channels, which this stand-in has none of.
   */
  startThread(
    channelId: string,
    name: unknown,
    ownerId: string,
    autoArchiveDuration: unknown,
    options: { type?: unknown; invitable?: unknown } = {},
  ): ThreadRecord {
    const target = this.ctx.guild.messageable(channelId);
    if (target.kind !== 'channel') throw new DiscordApiError('wrongChannelType');
    const type = threadType(options.type);
    if (
      options.invitable !== undefined &&
      options.invitable !== null &&
      typeof options.invitable !== 'boolean'
    )
      throw invalidForm(['invitable'], 'BASE_TYPE_BAD_TYPE', 'Must be either true or false.');
    const { threadName, duration } = validateThread(name, autoArchiveDuration);
    const thread = this.openThread(
      this.ctx.options.mint.next(),
      type,
      channelId,
      threadName,
      ownerId,
      duration,
    );
    if (type === CHANNEL_TYPE.privateThread) {
      thread.invitable = options.invitable !== false;
    } else {
      this.postSystemMessage(channelId, ownerId, MESSAGE_TYPE.threadCreated, thread.name, {
        messageId: null,
        channelId: thread.id,
      });
    }
    return thread;
  }

  /**
   * A message Discord writes itself (thread created, thread starter). The thread's first message
   * does not count in `message_count` ("not including the initial message") nor, being no message
   * sent, in `total_message_sent`.
   */
  private postSystemMessage(
    channelId: string,
    authorId: string,
    type: number,
    content: string,
    reference: { messageId: string | null; channelId: string },
  ): MessageRecord {
    const { guild, store } = this.ctx;
    const message: MessageRecord = {
      id: this.ctx.options.mint.next(),
      channelId,
      authorId,
      webhook: null,
      content,
      nonce: null,
      type,
      mentionIds: [],
      mentionRoleIds: [],
      mentionEveryone: false,
      attachments: [],
      embeds: [],
      components: [],
      referenceId: reference.messageId,
      referenceChannelId: reference.channelId,
      threadId: null,
      flags: 0,
      tts: false,
      editedAt: null,
    };
    store.add(message);
    const target = guild.messageable(channelId);
    if (target.kind === 'channel') target.channel.lastMessageId = message.id;
    else target.thread.lastMessageId = message.id;
    this.ctx.emit({
      t: 'MESSAGE_CREATE',
      d: this.ctx.render.renderMessage(message, { gateway: true }),
      intent: Intents.GuildMessages,
      message,
    });
    return message;
  }

  private openThread(
    id: string,
    type: ThreadType,
    parentId: string,
    name: string,
    ownerId: string,
    duration: number,
  ): ThreadRecord {
    const createdAt = new Date(this.ctx.options.now()).toISOString();
    const thread: ThreadRecord = {
      id,
      type,
      invitable: false,
      parentId,
      name,
      ownerId,
      createdAt,
      autoArchiveDuration: duration,
      archived: false,
      archiveChangedAt: createdAt,
      locked: false,
      lastMessageId: null,
      messageCount: 0,
      totalMessageSent: 0,
      memberIds: new Set([ownerId]),
    };
    this.ctx.guild.threads.set(thread.id, thread);
    this.ctx.store.openChannel(thread.id);
    this.ctx.emit({
      t: 'THREAD_CREATE',
      d: { ...this.ctx.render.renderThread(thread, ownerId), newly_created: true },
      intent: Intents.Guilds,
    });
    return thread;
  }
}

function validateThread(
  name: unknown,
  autoArchiveDuration: unknown,
): { threadName: string; duration: number } {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 100) {
    throw invalidForm(['name'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
  }
  const duration = typeof autoArchiveDuration === 'number' ? autoArchiveDuration : 4320;
  if (![60, 1440, 4320, 10080].includes(duration)) {
    throw invalidForm(
      ['auto_archive_duration'],
      'BASE_TYPE_CHOICES',
      'Value must be one of {60, 1440, 4320, 10080}.',
    );
  }
  return { threadName: name, duration };
}

function threadType(raw: unknown): ThreadType {
  if (raw === undefined || raw === null) return CHANNEL_TYPE.privateThread;
  if (raw === CHANNEL_TYPE.publicThread || raw === CHANNEL_TYPE.privateThread) return raw;
  if (raw === CHANNEL_TYPE.announcementThread) throw new DiscordApiError('wrongChannelType');
  throw invalidForm(['type'], 'BASE_TYPE_CHOICES', 'Value must be one of {10, 11, 12}.');
}
