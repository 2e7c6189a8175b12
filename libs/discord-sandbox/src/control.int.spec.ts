import { Events, type Message } from 'discord.js';
import { eventually } from '@caseloop/testing';
import { connectClient, destroyClient } from './discord-client.fixture';
import { LocalDiscord, type SandboxMessage, type SandboxState } from './local-discord';
import { defaultSeed } from './seed';

jest.setTimeout(60_000);

describe('the sandbox control API', () => {
  let discord: LocalDiscord;
  let client: Awaited<ReturnType<typeof connectClient>>;
  const call = async <T>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${discord.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };

  beforeAll(async () => {
    discord = await LocalDiscord.start(defaultSeed());
    client = await connectClient(discord);
    client.on(Events.MessageCreate, (message: Message) => {
      if (message.author.bot) return;
      void (async () => {
        await message.react('👀');
        if (!message.channel.isThread()) {
          const thread = await message.startThread({ name: `case ${message.id}` });
          await thread.send({ content: 'Recorded.', allowedMentions: { parse: [] } });
        }
      })();
    });
  });

  afterAll(async () => {
    await destroyClient(client);
    await discord?.close();
  });

  it('describes the guild, channels with their modes, users with personas, and URLs', async () => {
    const { status, body } = await call<SandboxState>('GET', '/sandbox/state');
    expect(status).toBe(200);
    expect(body.guild.name).toBe('caseloop-sandbox');
    expect(body.channels.map((c) => [c.name, c.mode])).toEqual([
      ['bugs', 'open'],
      ['feedback', 'mention'],
    ]);
    expect(body.users.map((u) => [u.username, u.persona])).toEqual([
      ['alice', 'reporter'],
      ['bob', 'reporter'],
      ['rita', 'reviewer'],
      ['sam', 'stranger'],
    ]);
    expect(body.bot).toMatchObject({ username: 'caseloop', bot: true });
    expect(body.gateway.connectedSessions).toBe(1);
    expect(body.urls.apiUrl).toBe(discord.apiUrl);
  });

  it('posts with defaults (first channel, first reporter) and lists replies, reactions and threads oldest first', async () => {
    const posted = await call<SandboxMessage>('POST', '/sandbox/messages', {
      content: 'report from a script',
    });
    expect(posted.status).toBe(200);
    expect(posted.body.channelId).toBe(discord.channelId('bugs'));
    expect(posted.body.author.username).toBe('alice');

    const bugsMessages = async (): Promise<SandboxMessage[]> =>
      (await call<SandboxMessage[]>('GET', `/sandbox/channels/${discord.channelId('bugs')}/messages`)).body;
    await eventually(
      async () => {
        const mine = (await bugsMessages()).find((m) => m.id === posted.body.id);
        return Boolean(mine?.thread && mine.reactions.length > 0 && mine.thread.messageCount === 1);
      },
      { what: 'reaction and thread on the posted message' },
    );
    const list = await bugsMessages();
    const mine = list.find((m) => m.id === posted.body.id);
    expect(mine?.reactions).toEqual([{ emoji: '👀', count: 1, userIds: [discord.botId], me: true }]);
    expect(mine?.thread?.id).toBe(posted.body.id);

    const thread = await call<SandboxMessage[]>('GET', `/sandbox/channels/${posted.body.id}/messages`);
    // The thread starter message (type 21, by the thread's creator, no content) comes first.
    expect(thread.body.map((m) => [m.type, m.author.username, m.content])).toEqual([
      [21, 'caseloop', ''],
      [0, 'caseloop', 'Recorded.'],
    ]);

    const reply = await call<SandboxMessage>('POST', '/sandbox/messages', {
      threadId: posted.body.id,
      authorId: discord.userId('rita'),
      content: 'approve',
    });
    expect(reply.body.channelId).toBe(posted.body.id);
    const after = await call<SandboxMessage[]>('GET', `/sandbox/channels/${posted.body.id}/messages`);
    expect(after.body.map((m) => m.content)).toEqual(['', 'Recorded.', 'approve']);
  });

  it('refuses bad input with a 400 naming the field, and unknown channels with 404', async () => {
    const bad = await call<{ error: string; details: { path: string }[] }>('POST', '/sandbox/messages', {
      content: 42,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d) => d.path)).toEqual(['content']);
    const unknown = await call<{ code: number }>('GET', '/sandbox/channels/123456789012345678/messages');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe(10003);
    const empty = await call<{ code: number }>('POST', '/sandbox/messages', { content: '' });
    expect(empty.body.code).toBe(50006);
  });

  it('injects faults and drives the gateway for scripts', async () => {
    const fault = await call<{ remaining: number }>('POST', '/sandbox/faults', {
      method: 'GET',
      path: '/users/@me',
      status: 502,
      times: 1,
    });
    expect(fault.body.remaining).toBe(1);
    const res = await fetch(`${discord.apiUrl}/v10/users/@me`, {
      headers: { Authorization: `Bot ${discord.token}` },
    });
    expect(res.status).toBe(502);

    const resumed = new Promise<void>((resolve) => client.once(Events.ShardResume, () => resolve()));
    const dropped = await call<{ connectedSessions: number }>('POST', '/sandbox/gateway', { action: 'drop' });
    expect(dropped.status).toBe(200);
    await resumed;
    const log = await call<{ requests: { path: string; status: number }[] }>('GET', '/sandbox/requests');
    expect(log.body.requests.some((r) => r.path === '/users/@me' && r.status === 502)).toBe(true);
  });

  it('streams changes to the page as server-sent events', async () => {
    const controller = new AbortController();
    const res = await fetch(`${discord.url}/sandbox/events`, { signal: controller.signal });
    const reader = res.body?.getReader();
    if (!reader) throw new Error('no event stream');
    let text = '';
    discord.say({ content: 'streamed' });
    const decoder = new TextDecoder();
    while (!text.includes('MESSAGE_CREATE')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    controller.abort();
    expect(text).toContain(`"channelId":"${discord.channelId('bugs')}"`);
  });
});
