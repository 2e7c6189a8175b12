import { DiscordApiError, invalidForm } from './errors';
import type { WorldContext } from './world-context';
import { Intents, MESSAGE_FLAG_HAS_THREAD, type ThreadRecord } from './world-types';

/** Public threads: started from a message or on their own, archived, locked. */
export class WorldThreads {
  constructor(private readonly ctx: WorldContext) {}

  setThreadArchived(threadId: string, archived: boolean): ThreadRecord {
    const thread = this.ctx.guild.thread(threadId);
    if (thread.archived === archived) return thread;
    thread.archived = archived;
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
    const thread = this.openThread(message.id, channelId, threadName, ownerId, duration);
    message.threadId = thread.id;
    message.flags |= MESSAGE_FLAG_HAS_THREAD;
    this.ctx.emit({
      t: 'MESSAGE_UPDATE',
      d: render.renderMessage(message, { gateway: true }),
      intent: Intents.GuildMessages,
      message,
    });
    return thread;
  }

  /** A public thread without a starter message (`POST /channels/{id}/threads`): it gets a fresh id. */
  startThread(channelId: string, name: unknown, ownerId: string, autoArchiveDuration: unknown): ThreadRecord {
    const target = this.ctx.guild.messageable(channelId);
    if (target.kind !== 'channel') throw new DiscordApiError('wrongChannelType');
    const { threadName, duration } = validateThread(name, autoArchiveDuration);
    return this.openThread(this.ctx.options.mint.next(), channelId, threadName, ownerId, duration);
  }

  private openThread(
    id: string,
    parentId: string,
    name: string,
    ownerId: string,
    duration: number,
  ): ThreadRecord {
    const thread: ThreadRecord = {
      id,
      parentId,
      name,
      ownerId,
      createdAt: new Date(this.ctx.options.now()).toISOString(),
      autoArchiveDuration: duration,
      archived: false,
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
