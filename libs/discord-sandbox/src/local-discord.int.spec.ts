import { ChannelType, Events, Routes, type Message, type TextChannel } from 'discord.js';
import { eventually } from '@caseloop/testing';
import { connectClient, destroyClient } from './discord-client.fixture';
import { LocalDiscord } from './local-discord';
import { defaultSeed } from './seed';

jest.setTimeout(60_000);

describe('LocalDiscord with an unmodified discord.js client', () => {
  let discord: LocalDiscord;
  let client: Awaited<ReturnType<typeof connectClient>>;
  let bugs: string;
  let alice: string;

  beforeAll(async () => {
    discord = await LocalDiscord.start(defaultSeed());
    client = await connectClient(discord);
    bugs = discord.channelId('bugs');
    alice = discord.userId('alice');
  });

  afterAll(async () => {
    await destroyClient(client);
    await discord?.close();
  });

  const textChannel = (id: string): TextChannel => {
    const channel = client.channels.cache.get(id);
    if (!channel || channel.type !== ChannelType.GuildText)
      throw new Error(`channel ${id} not cached as text`);
    return channel;
  };

  it('logs in and caches the guild, its channels and members before ClientReady', () => {
    const guild = client.guilds.cache.get(discord.guildId);
    expect(guild?.name).toBe('caseloop-sandbox');
    expect(guild?.channels.cache.map((c) => c.name).sort()).toEqual(['bugs', 'feedback']);
    expect(guild?.members.cache.get(alice)?.user.username).toBe('alice');
    expect(client.user.id).toBe(discord.botId);
    expect(client.user.bot).toBe(true);
  });

  it('answers the bot user whether @me arrives raw or percent-encoded (discord.js sends %40me)', async () => {
    const viaClient = (await client.users.fetch(discord.botId, { force: true })).id;
    const encoded = (await client.rest.get(`/users/${encodeURIComponent('@me')}` as `/${string}`)) as {
      id: string;
    };
    const raw = (await client.rest.get(Routes.user('@me'))) as { id: string };
    expect([viaClient, encoded.id, raw.id]).toEqual([discord.botId, discord.botId, discord.botId]);
  });

  it('rejects REST calls without the bot token with 401', async () => {
    const res = await fetch(`${discord.apiUrl}/v10/users/@me`, { headers: { Authorization: 'Bot wrong' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: '401: Unauthorized', code: 0 });
  });

  it('delivers what a user says as messageCreate with content, author and member', async () => {
    const received = new Promise<Message>((resolve) => {
      const onMessage = (m: Message): void => {
        if (m.content !== 'the export button does nothing') return;
        client.off(Events.MessageCreate, onMessage);
        resolve(m);
      };
      client.on(Events.MessageCreate, onMessage);
    });
    const said = discord.say({ authorId: alice, channelId: bugs, content: 'the export button does nothing' });
    const message = await received;
    expect(message.id).toBe(said.id);
    expect(message.author.id).toBe(alice);
    expect(message.author.bot).toBe(false);
    expect(message.member?.roles.cache.has(discord.roleId('reporters'))).toBe(true);
    expect(message.webhookId).toBeNull();
    expect(message.createdTimestamp).toBeGreaterThan(Date.now() - 60_000);
  });

  it('echoes the bot its own messages, and marks webhook messages', async () => {
    const seen: Message[] = [];
    const onMessage = (m: Message): void => void seen.push(m);
    client.on(Events.MessageCreate, onMessage);
    const sent = await textChannel(bugs).send({ content: 'own message', allowedMentions: { parse: [] } });
    const hooked = discord.postAsWebhook({ channelId: bugs, content: 'deploy finished' });
    await eventually(() => seen.some((m) => m.id === sent.id) && seen.some((m) => m.id === hooked.id), {
      what: 'both echoes',
    });
    client.off(Events.MessageCreate, onMessage);
    expect(seen.find((m) => m.id === sent.id)?.author.id).toBe(discord.botId);
    const webhookMessage = seen.find((m) => m.id === hooked.id);
    expect(webhookMessage?.webhookId).toBe(hooked.webhookId);
    expect(webhookMessage?.author.bot).toBe(true);
  });

  it('dedupes a nonce with enforce_nonce: the second send returns the first message', async () => {
    const before = discord.messages(bugs).length;
    const first = await textChannel(bugs).send({ content: 'ack once', nonce: 'ack-1', enforceNonce: true });
    const second = await textChannel(bugs).send({ content: 'ack once', nonce: 'ack-1', enforceNonce: true });
    expect(second.id).toBe(first.id);
    expect(discord.messages(bugs).length).toBe(before + 1);
    // Without enforce_nonce Discord does not dedupe.
    const third = await textChannel(bugs).send({ content: 'ack once', nonce: 'ack-1' });
    expect(third.id).not.toBe(first.id);
  });

  it('stores once when a 502 follows the store and the client retries with the same enforced nonce', async () => {
    const before = discord.messages(bugs).length;
    const fault = discord.inject({
      method: 'POST',
      path: `/channels/${bugs}/messages`,
      status: 502,
      when: 'after',
    });
    const sent = await textChannel(bugs).send({
      content: 'survives a 502',
      nonce: 'reply-502',
      enforceNonce: true,
    });
    expect(fault.fired).toBe(1);
    const posts = discord.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === `/channels/${bugs}/messages` &&
        (r.body as { nonce?: string })?.nonce === 'reply-502',
    );
    expect(posts.map((r) => r.status)).toEqual([502, 200]);
    const stored = discord.messages(bugs).filter((m) => m.content === 'survives a 502');
    expect(stored).toHaveLength(1);
    expect(stored[0]?.id).toBe(sent.id);
    expect(discord.messages(bugs).length).toBe(before + 1);
  });

  it('answers an injected 429 with Retry-After that discord.js honours', async () => {
    const fault = discord.inject({
      method: 'POST',
      path: '/channels/:channel/typing',
      status: 429,
      retryAfterMs: 1200,
    });
    const started = Date.now();
    await textChannel(bugs).sendTyping();
    const waited = Date.now() - started;
    expect(fault.fired).toBe(1);
    const calls = discord.requests.filter((r) => r.route === '/channels/:channel/typing' && r.at >= started);
    expect(calls.map((r) => r.status)).toEqual([429, 204]);
    const gap = (calls[1]?.at ?? 0) - (calls[0]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(1150);
    expect(waited).toBeGreaterThanOrEqual(1150);
  });

  it('puts rate-limit headers on every response and Discord error bodies on failures', async () => {
    const auth = { Authorization: `Bot ${discord.token}`, 'Content-Type': 'application/json' };
    const ok = await fetch(`${discord.apiUrl}/v10/channels/${bugs}`, { headers: auth });
    for (const h of [
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'x-ratelimit-reset-after',
      'x-ratelimit-bucket',
    ]) {
      expect(ok.headers.get(h)).not.toBeNull();
    }
    const post = (body: unknown): Promise<Response> =>
      fetch(`${discord.apiUrl}/v10/channels/${bugs}/messages`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify(body),
      });
    const tooLong = await post({ content: 'x'.repeat(2001) });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({
      code: 50035,
      errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
    });
    expect(await (await post({ content: '' })).json()).toMatchObject({ code: 50006 });
    expect(await (await post({ content: 'hi', nonce: 'n'.repeat(26) })).json()).toMatchObject({
      code: 50035,
      errors: { nonce: {} },
    });
    expect(
      await (await post({ content: 'hi', allowed_mentions: { parse: ['users'], users: [alice] } })).json(),
    ).toMatchObject({
      code: 50035,
      errors: { allowed_mentions: { _errors: [{ code: 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE' }] } },
    });
    const unknown = await fetch(`${discord.apiUrl}/v10/channels/123456789012345678/messages`, {
      headers: auth,
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 10003, message: 'Unknown Channel' });
  });

  it('replies with message_reference and reacts idempotently with a URL-encoded emoji', async () => {
    const report = discord.say({ authorId: alice, channelId: bugs, content: 'crash on save' });
    const channel = textChannel(bugs);
    const fetched = await channel.messages.fetch(report.id);
    const reply = await fetched.reply({ content: 'Got it.', allowedMentions: { parse: [] } });
    expect(discord.message(reply.id)?.replyTo).toBe(report.id);

    await fetched.react('👀');
    await fetched.react('👀');
    const puts = discord.requests.filter(
      (r) => r.method === 'PUT' && r.path.includes(`/messages/${report.id}/reactions/`),
    );
    expect(puts.map((r) => [r.path.split('/')[6], r.status])).toEqual([
      ['%F0%9F%91%80', 204],
      ['%F0%9F%91%80', 204],
    ]);
    expect(discord.reactions(report.id)).toEqual([
      { emoji: '👀', count: 1, userIds: [discord.botId], me: true },
    ]);

    const raw = await fetch(
      `${discord.apiUrl}/v10/channels/${bugs}/messages/${report.id}/reactions/notanemoji/@me`,
      {
        method: 'PUT',
        headers: { Authorization: `Bot ${discord.token}` },
      },
    );
    expect(await raw.json()).toEqual({ code: 10014, message: 'Unknown Emoji' });
  });

  it('creates one thread per message (id = message id, guild_id set, THREAD_CREATE) and refuses a second with 160004', async () => {
    const report = discord.say({ authorId: alice, channelId: bugs, content: 'login loops forever' });
    const created = new Promise<string>((resolve) => client.once(Events.ThreadCreate, (t) => resolve(t.id)));
    const message = await textChannel(bugs).messages.fetch(report.id);
    const thread = await message.startThread({ name: 'case: login loops' });
    expect(thread.id).toBe(report.id);
    expect(thread.guildId).toBe(discord.guildId);
    expect(await created).toBe(report.id);
    // discord.js refuses locally once it knows the message has a thread; the API refuses too.
    await expect(message.startThread({ name: 'again' })).rejects.toMatchObject({
      code: 'MessageExistingThread',
    });
    await expect(
      client.rest.post(Routes.threads(bugs, report.id), { body: { name: 'again' } }),
    ).rejects.toMatchObject({ code: 160004, status: 400 });

    const inThread = new Promise<Message>((resolve) => {
      const onMessage = (m: Message): void => {
        if (m.channelId !== thread.id || m.author.bot) return;
        client.off(Events.MessageCreate, onMessage);
        resolve(m);
      };
      client.on(Events.MessageCreate, onMessage);
    });
    discord.say({ authorId: alice, threadId: thread.id, content: 'more details in the thread' });
    expect((await inThread).content).toBe('more details in the thread');
    await thread.send({ content: 'bot in thread', allowedMentions: { parse: [] } });
    // First, the thread starter message (type 21, no content) Discord puts in a thread started from a message.
    expect(discord.messages(thread.id).map((m) => m.content)).toEqual([
      '',
      'more details in the thread',
      'bot in thread',
    ]);
    const standalone = await textChannel(bugs).threads.create({ name: 'standalone' });
    expect(standalone.parentId).toBe(bugs);
    const active = await client.guilds.cache.get(discord.guildId)?.channels.fetchActiveThreads();
    expect([...(active?.threads.keys() ?? [])].sort()).toEqual([thread.id, standalone.id].sort());
  });

  it('pages messages?after= newest → oldest', async () => {
    const fresh = await LocalDiscord.start(defaultSeed());
    const freshClient = await connectClient(fresh);
    try {
      const channelId = fresh.channelId('feedback');
      const said = Array.from({ length: 7 }, (_, i) => fresh.say({ channelId, content: `m${i}` }));
      const channel = freshClient.channels.cache.get(channelId) as TextChannel;
      const first = await channel.messages.fetch({ after: '0', limit: 3, cache: false });
      expect([...first.values()].map((m) => m.content)).toEqual(['m2', 'm1', 'm0']);
      // Page forward by taking the first (largest) id as the next `after`.
      const seen: string[] = [];
      let after = '0';
      for (;;) {
        const page = [...(await channel.messages.fetch({ after, limit: 3, cache: false })).values()];
        seen.push(...page.map((m) => m.content).reverse());
        if (page.length < 3) break;
        after = page[0]?.id ?? after;
      }
      expect(seen).toEqual(said.map((m) => m.content));
      const before = [
        ...(await channel.messages.fetch({ before: said[3]?.id, limit: 2, cache: false })).values(),
      ];
      expect(before.map((m) => m.content)).toEqual(['m2', 'm1']);
    } finally {
      await destroyClient(freshClient);
      await fresh.close();
    }
  });

  it('resumes after the gateway drops mid-burst and delivers all 50 messages exactly once', async () => {
    const received: string[] = [];
    const onMessage = (m: Message): void => {
      if (m.content.startsWith('burst-')) received.push(m.content);
    };
    client.on(Events.MessageCreate, onMessage);
    const resumedBefore = discord.resumeCount;
    const resumed = new Promise<void>((resolve) => client.once(Events.ShardResume, () => resolve()));
    for (let i = 0; i < 50; i++) {
      discord.say({ authorId: alice, channelId: bugs, content: `burst-${i}` });
      if (i === 20) discord.dropGateway();
    }
    await resumed;
    await eventually(() => received.length >= 50, { what: '50 burst messages', timeoutMs: 20_000 });
    client.off(Events.MessageCreate, onMessage);
    expect(received).toEqual(Array.from({ length: 50 }, (_, i) => `burst-${i}`));
    expect(discord.resumeCount).toBe(resumedBefore + 1);
  });

  it('follows RECONNECT with a resume, and a non-resumable INVALID_SESSION with a fresh IDENTIFY', async () => {
    const resumedBefore = discord.resumeCount;
    const resumed = new Promise<void>((resolve) => client.once(Events.ShardResume, () => resolve()));
    discord.requestReconnect();
    await resumed;
    expect(discord.resumeCount).toBe(resumedBefore + 1);

    const identifiesBefore = discord.identifyCount;
    const reidentified = new Promise<void>((resolve) => client.once(Events.ShardReady, () => resolve()));
    discord.invalidateSession(false);
    await reidentified;
    expect(discord.identifyCount).toBe(identifiesBefore + 1);

    const got = new Promise<string>((resolve) => {
      const onMessage = (m: Message): void => {
        if (m.content !== 'after re-identify') return;
        client.off(Events.MessageCreate, onMessage);
        resolve(m.id);
      };
      client.on(Events.MessageCreate, onMessage);
    });
    const said = discord.say({ channelId: bugs, content: 'after re-identify' });
    expect(await got).toBe(said.id);
  });

  it('drops events while dispatch is paused (stored, found by a delta fetch)', async () => {
    const seen: string[] = [];
    const onMessage = (m: Message): void => void seen.push(m.content);
    client.on(Events.MessageCreate, onMessage);
    const anchor = discord.say({ channelId: bugs, content: 'anchor' });
    await eventually(() => seen.includes('anchor'), { what: 'anchor' });
    discord.pauseDispatch();
    discord.say({ channelId: bugs, content: 'missed live' });
    discord.resumeDispatch();
    discord.say({ channelId: bugs, content: 'seen live' });
    await eventually(() => seen.includes('seen live'), { what: 'seen live' });
    client.off(Events.MessageCreate, onMessage);
    expect(seen).not.toContain('missed live');
    const delta = await textChannel(bugs).messages.fetch({ after: anchor.id, cache: false });
    expect([...delta.values()].map((m) => m.content)).toEqual(['seen live', 'missed live']);
  });

  it('dispatches a slash command and records the reply', async () => {
    const rita = discord.userId('rita');
    const answered = new Promise<void>((resolve) => {
      client.once(Events.InteractionCreate, (interaction) => {
        if (!interaction.isChatInputCommand()) return;
        const sub = interaction.options.getSubcommand();
        void interaction
          .reply({
            content: `${sub} by ${interaction.user.username}: ${interaction.options.getString('reason') ?? ''}`,
          })
          .then(() => resolve());
      });
    });
    const record = discord.slash({
      authorId: rita,
      channelId: bugs,
      name: 'caseloop',
      subcommand: 'reject',
      options: { reason: 'not a bug' },
    });
    await answered;
    const [logged] = discord.interactionLog().filter((i) => i.id === record.id);
    expect(logged?.reply?.content).toBe('reject by rita: not a bug');
    expect(discord.messages(bugs).at(-1)?.content).toBe('reject by rita: not a bug');
  });

  it('closes the gateway with 4014 and the client reports the disallowed intent', async () => {
    const fresh = await LocalDiscord.start(defaultSeed());
    const freshClient = await connectClient(fresh);
    try {
      const disconnected = new Promise<number>((resolve) =>
        freshClient.once(Events.ShardDisconnect, (event) => resolve(event.code)),
      );
      const error = new Promise<Error>((resolve) => freshClient.once(Events.ShardError, (e) => resolve(e)));
      fresh.closeGateway(4014);
      expect(await disconnected).toBe(4014);
      expect((await error).message).toBe('Used disallowed intents');
    } finally {
      await destroyClient(freshClient);
      await fresh.close();
    }
  });

  it('refuses IDENTIFY asking for message content when the app lacks the intent (4014 rejects login)', async () => {
    const fresh = await LocalDiscord.start({ ...defaultSeed(), messageContentIntent: false });
    try {
      await expect(connectClient(fresh)).rejects.toThrow('Used disallowed intents');
      await eventually(
        () => fresh.gatewayOps.some((o) => o.direction === 'close' && o.code === 4014 && o.by === 'server'),
        { what: 'close 4014' },
      );
    } finally {
      await fresh.close();
    }
  });
});
