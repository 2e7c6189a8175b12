import { DiscordApiError } from './errors';
import { defaultSeed, localDiscordSeedSchema } from './seed';
import { SnowflakeMint } from './snowflake';
import { DiscordWorld, parseEmoji, type WorldEvent } from './world';

function makeWorld(overrides: { now?: () => number; messageContentIntent?: boolean } = {}): {
  world: DiscordWorld;
  events: WorldEvent[];
  ids: Record<string, string>;
} {
  const now = overrides.now ?? (() => 1_760_000_000_000);
  let tick = 0;
  const mint = new SnowflakeMint(() => now() + tick++);
  const world = new DiscordWorld({
    seed: localDiscordSeedSchema.parse(defaultSeed()),
    mint,
    dedupeWindowMs: 120_000,
    messageContentIntent: overrides.messageContentIntent ?? true,
    now,
    attachmentUrl: (c, a, f) => `http://x/${c}/${a}/${f}`,
  });
  const events: WorldEvent[] = [];
  world.subscribe((e) => void events.push(e));
  const ids: Record<string, string> = {};
  for (const c of world.channels.values()) ids[c.name] = c.id;
  for (const u of world.users.values()) ids[u.username] = u.id;
  return { world, events, ids };
}

const codeOf = (fn: () => unknown): number | string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof DiscordApiError)
      return e.errors ? `${e.code}:${Object.keys(e.errors).join(',')}` : e.code;
    throw e;
  }
  return 'ok';
};

describe('DiscordWorld', () => {
  it('validates a post like Discord: length, emptiness, nonce size, allowed_mentions, references', () => {
    const { world, ids } = makeWorld();
    const post = (extra: object) => () =>
      world.postMessage({ channelId: ids.bugs as string, authorId: world.botId, content: 'hi', ...extra });
    expect(codeOf(post({ content: 'x'.repeat(2000) }))).toBe('ok');
    expect(codeOf(post({ content: 'x'.repeat(2001) }))).toBe('50035:content');
    expect(codeOf(post({ content: '' }))).toBe(50006);
    expect(
      codeOf(post({ content: '', attachments: [{ filename: 'a.txt', size: 1, contentType: null }] })),
    ).toBe('ok');
    expect(codeOf(post({ nonce: 'n'.repeat(25) }))).toBe('ok');
    expect(codeOf(post({ nonce: 'n'.repeat(26) }))).toBe('50035:nonce');
    expect(codeOf(post({ allowedMentions: { parse: ['users'], users: [ids.alice] } }))).toBe(
      '50035:allowed_mentions',
    );
    expect(codeOf(post({ allowedMentions: { parse: ['people'] } }))).toBe('50035:allowed_mentions');
    expect(codeOf(post({ messageReference: { message_id: '123456789012345678' } }))).toBe(
      '50035:message_reference',
    );
    expect(
      codeOf(post({ messageReference: { message_id: '123456789012345678', fail_if_not_exists: false } })),
    ).toBe('ok');
    expect(
      codeOf(() =>
        world.postMessage({ channelId: '123456789012345678', authorId: world.botId, content: 'x' }),
      ),
    ).toBe(10003);
  });

  it('records only the mentions allowed_mentions lets through', () => {
    const { world, ids } = makeWorld();
    const content = `<@${ids.alice}> and <@!${ids.bob}>`;
    const none = world.postMessage({
      channelId: ids.bugs as string,
      authorId: world.botId,
      content,
      allowedMentions: { parse: [] },
    }).message;
    const one = world.postMessage({
      channelId: ids.bugs as string,
      authorId: world.botId,
      content,
      allowedMentions: { users: [ids.bob] },
    }).message;
    const all = world.postMessage({ channelId: ids.bugs as string, authorId: world.botId, content }).message;
    expect(none.mentionIds).toEqual([]);
    expect(one.mentionIds).toEqual([ids.bob]);
    expect(all.mentionIds).toEqual([ids.alice, ids.bob]);
  });

  it('dedupes an enforced nonce per (author, nonce), whatever the channel, inside the window only', () => {
    let now = 1_760_000_000_000;
    const { world, ids, events } = makeWorld({ now: () => now });
    const send = (channel: string, authorId = world.botId) =>
      world.postMessage({ channelId: channel, authorId, content: 'ack', nonce: 'ack-1', enforceNonce: true });
    const first = send(ids.bugs as string);
    expect(send(ids.bugs as string)).toEqual({ message: first.message, created: false });
    // "If another message was created by the same author with the same nonce, that message will be returned."
    expect(send(ids.feedback as string)).toEqual({ message: first.message, created: false });
    expect(send(ids.bugs as string, ids.alice).created).toBe(true);
    expect(
      world.postMessage({
        channelId: ids.bugs as string,
        authorId: world.botId,
        content: 'ack',
        nonce: 'ack-1',
      }).created,
    ).toBe(true);
    now += 120_001;
    expect(send(ids.bugs as string).created).toBe(true);
    expect(events.filter((e) => e.t === 'MESSAGE_CREATE')).toHaveLength(4);
  });

  it('pages history newest → oldest for after, before, around and latest', () => {
    const { world, ids } = makeWorld();
    const channelId = ids.bugs as string;
    const m = Array.from(
      { length: 10 },
      (_, i) => world.postMessage({ channelId, authorId: ids.alice as string, content: `m${i}` }).message,
    );
    const contents = (page: { content: string }[]) => page.map((x) => x.content);
    expect(contents(world.history(channelId, { limit: 3 }))).toEqual(['m9', 'm8', 'm7']);
    expect(contents(world.history(channelId, { after: m[2]?.id, limit: 3 }))).toEqual(['m5', 'm4', 'm3']);
    expect(contents(world.history(channelId, { after: '0', limit: 2 }))).toEqual(['m1', 'm0']);
    expect(contents(world.history(channelId, { before: m[2]?.id, limit: 5 }))).toEqual(['m1', 'm0']);
    expect(contents(world.history(channelId, { around: m[5]?.id, limit: 3 }))).toEqual(['m6', 'm5', 'm4']);
    expect(world.history(channelId, { after: m[9]?.id })).toEqual([]);
  });

  it('adds a reaction once and emits one event', () => {
    const { world, ids, events } = makeWorld();
    const { message } = world.postMessage({
      channelId: ids.bugs as string,
      authorId: ids.alice as string,
      content: 'bug',
    });
    expect(world.addReaction(message.channelId, message.id, '👀', world.botId)).toBe(true);
    expect(world.addReaction(message.channelId, message.id, '👀', world.botId)).toBe(false);
    expect(events.filter((e) => e.t === 'MESSAGE_REACTION_ADD')).toHaveLength(1);
    expect(world.reactionsOn(message.id)).toEqual([
      { emoji: { id: null, name: '👀' }, userIds: [world.botId] },
    ]);
    expect(world.removeReaction(message.channelId, message.id, '👀', world.botId)).toBe(true);
    expect(world.reactionsOn(message.id)).toEqual([]);
  });

  it('accepts unicode emoji and refuses anything else with 10014', () => {
    for (const ok of ['👀', '👍🏽', '🇺🇸', '1️⃣', '❤️', '👨‍👩‍👧'])
      expect(parseEmoji(ok)).toEqual({ id: null, name: ok });
    for (const bad of ['', 'eyes', ':eyes:', 'name:123456789012345678', '1', '#'])
      expect(codeOf(() => parseEmoji(bad))).toBe(10014);
  });

  it('opens one thread per message in a text channel, with the message id', () => {
    const { world, ids, events } = makeWorld();
    const { message } = world.postMessage({
      channelId: ids.bugs as string,
      authorId: ids.alice as string,
      content: 'bug',
    });
    expect(
      codeOf(() => world.startThreadFromMessage(ids.bugs as string, message.id, '', world.botId, undefined)),
    ).toBe('50035:name');
    const thread = world.startThreadFromMessage(
      ids.bugs as string,
      message.id,
      'case',
      world.botId,
      undefined,
    );
    expect(thread.id).toBe(message.id);
    expect(events.find((e) => e.t === 'THREAD_CREATE')?.d).toMatchObject({
      id: message.id,
      guild_id: world.guildId,
      parent_id: ids.bugs,
      type: 11,
    });
    expect(
      codeOf(() =>
        world.startThreadFromMessage(ids.bugs as string, message.id, 'again', world.botId, undefined),
      ),
    ).toBe(160004);
    const inThread = world.postMessage({
      channelId: thread.id,
      authorId: ids.alice as string,
      content: 'more',
    }).message;
    expect(
      codeOf(() => world.startThreadFromMessage(thread.id, inThread.id, 'nested', world.botId, undefined)),
    ).toBe(50024);
    expect(world.threads.get(thread.id)?.messageCount).toBe(1);
  });

  it('blanks content for readers without the content privilege unless mentioned or own', () => {
    const { world, ids } = makeWorld();
    const plain = world.postMessage({
      channelId: ids.bugs as string,
      authorId: ids.alice as string,
      content: 'secret',
    }).message;
    const mention = world.postMessage({
      channelId: ids.bugs as string,
      authorId: ids.alice as string,
      content: `<@${world.botId}> hi`,
    }).message;
    const own = world.postMessage({
      channelId: ids.bugs as string,
      authorId: world.botId,
      content: 'mine',
    }).message;
    expect(world.redactForContent(plain, world.renderMessage(plain)).content).toBe('');
    expect(world.redactForContent(mention, world.renderMessage(mention)).content).toBe(
      `<@${world.botId}> hi`,
    );
    expect(world.redactForContent(own, world.renderMessage(own)).content).toBe('mine');
  });

  it('opens a thread without a starter message under a fresh id', () => {
    const { world, ids, events } = makeWorld();
    const thread = world.startThread(ids.bugs as string, 'release notes', world.botId, 1440);
    expect(world.findMessage(thread.id)).toBeUndefined();
    expect(events.find((e) => e.t === 'THREAD_CREATE')?.d).toMatchObject({
      id: thread.id,
      parent_id: ids.bugs,
    });
    expect(codeOf(() => world.startThread(ids.bugs as string, 'x', world.botId, 5))).toBe(
      '50035:auto_archive_duration',
    );
    expect(codeOf(() => world.startThread(thread.id, 'nested', world.botId, undefined))).toBe(50024);
  });
});
