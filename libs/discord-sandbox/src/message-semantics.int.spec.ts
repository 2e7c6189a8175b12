import { Events, GatewayIntentBits, type TextChannel } from 'discord.js';
import { eventually } from '@caseloop/testing';
import { connectClient, destroyClient } from './discord-client.fixture';
import { LocalDiscord } from './local-discord';
import { defaultSeed } from './seed';

jest.setTimeout(60_000);

type Packet = { t: string | null; d: Record<string, unknown> };
type FieldErrors = { code: number; errors?: Record<string, unknown> };

/**
 * Messages as Discord's developer documentation describes them: the system messages threads bring
 * (Threads topic, "New Message Types"), the thread type a bare `POST /channels/{id}/threads` gets,
 * `enforce_nonce` per author, Embed Limits, and the MESSAGE_CREATE payload (Gateway events).
 */
describe('LocalDiscord messages as the documentation describes them', () => {
  let discord: LocalDiscord;
  let client: Awaited<ReturnType<typeof connectClient>>;
  const packets: Packet[] = [];
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${discord.apiUrl}/v10${path}`, {
      ...init,
      headers: { Authorization: `Bot ${discord.token}`, 'Content-Type': 'application/json', ...init.headers },
    });
  const post = async <T>(
    path: string,
    body: unknown,
    method = 'POST',
  ): Promise<{ status: number; body: T }> => {
    const res = await api(path, { method, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as T };
  };
  const created = (pred: (d: Record<string, unknown>) => boolean) =>
    packets.filter((p) => p.t === 'MESSAGE_CREATE' && pred(p.d)).map((p) => p.d);

  beforeAll(async () => {
    discord = await LocalDiscord.start({ ...defaultSeed(), dedupeWindowMs: 60_000 });
    client = await connectClient(discord, {
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.GuildMembers,
        GatewayIntentBits.MessageContent,
      ],
    });
    client.on(Events.Raw, (p: Packet) => packets.push(p));
  });
  afterAll(async () => {
    await destroyClient(client);
    await discord?.close();
  });

  it('starting a thread from a message posts THREAD_CREATED (18) in the channel and THREAD_STARTER_MESSAGE (21) in the thread', async () => {
    const bugs = discord.channelId('bugs');
    const report = discord.say({ channelId: bugs, content: 'the cart empties itself' });
    const channel = (await client.channels.fetch(bugs)) as TextChannel;
    const message = await channel.messages.fetch(report.id);
    const thread = await message.startThread({ name: 'Case C07' });

    // Parent channel: content is the thread's name, message_reference the thread (no message_id).
    await eventually(() => created((d) => d.type === 18 && d.channel_id === bugs).length === 1, {
      what: 'THREAD_CREATED dispatched',
    });
    const announced = created((d) => d.type === 18 && d.channel_id === bugs)[0] as Record<string, unknown>;
    expect(announced.content).toBe('Case C07');
    expect(announced.message_reference).toEqual({
      type: 0,
      channel_id: thread.id,
      guild_id: discord.guildId,
    });

    // Thread: the first message, empty, pointing back at the starter message.
    await eventually(() => created((d) => d.type === 21 && d.channel_id === thread.id).length === 1, {
      what: 'THREAD_STARTER_MESSAGE dispatched',
    });
    const starter = created((d) => d.type === 21)[0] as Record<string, unknown>;
    expect(starter.content).toBe('');
    expect(starter.message_reference).toEqual({
      type: 0,
      message_id: report.id,
      channel_id: bugs,
      guild_id: discord.guildId,
    });
    const history = await post<Record<string, unknown>[]>(
      `/channels/${thread.id}/messages`,
      undefined,
      'GET',
    );
    expect(history.body.map((m) => m.type)).toEqual([21]);
    expect((history.body[0]?.referenced_message as { id: string }).id).toBe(report.id);
    // "message_count: not including the initial message".
    const fetched = await post<{ message_count: number }>(`/channels/${thread.id}`, undefined, 'GET');
    expect(fetched.body.message_count).toBe(0);
  });

  it('gives POST /channels/{id}/threads without type a private thread (12), announced by no message; a public one gets THREAD_CREATED', async () => {
    const bugs = discord.channelId('bugs');
    const before = discord.messages(bugs).length;
    const bare = await post<{ id: string; type: number; thread_metadata: { invitable?: boolean } }>(
      `/channels/${bugs}/threads`,
      { name: 'no type given' },
    );
    expect(bare.status).toBe(201);
    expect(bare.body.type).toBe(12);
    expect(bare.body.thread_metadata.invitable).toBe(true);
    expect(discord.messages(bugs)).toHaveLength(before);

    const open = await post<{ id: string; type: number }>(`/channels/${bugs}/threads`, {
      name: 'open thread',
      type: 11,
    });
    expect(open.body.type).toBe(11);
    const after = discord.messages(bugs);
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)).toMatchObject({ type: 18, content: 'open thread' });
    expect(discord.messages(open.body.id)).toHaveLength(0);

    const wrong = await post<FieldErrors>(`/channels/${bugs}/threads`, { name: 'x', type: 0 });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe(50035);
  });

  it("writes a thread's times in Discord's form and moves archive_timestamp when its archive status changes", async () => {
    type Meta = {
      thread_metadata: { archive_timestamp: string; create_timestamp: string; archived: boolean };
    };
    const bugs = discord.channelId('bugs');
    const open = await post<Meta & { id: string }>(`/channels/${bugs}/threads`, { name: 'times', type: 11 });
    const first = open.body.thread_metadata;
    expect(first.create_timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(first.archive_timestamp).toBe(first.create_timestamp);
    await new Promise((r) => setTimeout(r, 20));
    const archived = await post<Meta>(`/channels/${open.body.id}`, { archived: true }, 'PATCH');
    expect(archived.status).toBe(200);
    const meta = archived.body.thread_metadata;
    expect(meta.archived).toBe(true);
    expect(meta.create_timestamp).toBe(first.create_timestamp);
    expect(meta.archive_timestamp).toMatch(/\+00:00$/);
    expect(Date.parse(meta.archive_timestamp)).toBeGreaterThan(Date.parse(first.archive_timestamp));
  });

  it('dedupes an enforced nonce per author, whatever the channel', async () => {
    const bugs = discord.channelId('bugs');
    const first = await post<{ id: string; channel_id: string }>(`/channels/${bugs}/messages`, {
      content: 'once only',
      nonce: 'per-author-1',
      enforce_nonce: true,
    });
    const other = discord.state().channels.find((c) => c.id !== bugs)?.id as string;
    const before = discord.messages(other).length;
    const second = await post<{ id: string; channel_id: string }>(`/channels/${other}/messages`, {
      content: 'once only',
      nonce: 'per-author-1',
      enforce_nonce: true,
    });
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.channel_id).toBe(bugs);
    expect(discord.messages(other)).toHaveLength(before);
  });

  it('refuses embeds over the Embed Limits with 400 50035 and field errors, on create and on edit', async () => {
    const bugs = discord.channelId('bugs');
    const path = `/channels/${bugs}/messages`;
    const errorAt = (body: FieldErrors, ...keys: string[]) =>
      keys.reduce<unknown>((node, k) => (node as Record<string, unknown> | undefined)?.[k], body.errors) as
        { _errors: { code: string }[] } | undefined;
    const over = async (embeds: unknown[], ...keys: string[]) => {
      const r = await post<FieldErrors>(path, { embeds });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(50035);
      expect(errorAt(r.body, ...keys)?._errors[0]?.code).toBeDefined();
    };
    const x = (n: number) => 'x'.repeat(n);
    await over([{ title: x(257) }], 'embeds', '0', 'title');
    await over([{ description: x(4097) }], 'embeds', '0', 'description');
    await over(
      [{ fields: Array.from({ length: 26 }, () => ({ name: 'n', value: 'v' })) }],
      'embeds',
      '0',
      'fields',
    );
    await over([{ fields: [{ name: x(257), value: 'v' }] }], 'embeds', '0', 'fields', '0', 'name');
    await over([{ fields: [{ name: 'n', value: x(1025) }] }], 'embeds', '0', 'fields', '0', 'value');
    await over([{ footer: { text: x(2049) } }], 'embeds', '0', 'footer', 'text');
    await over([{ author: { name: x(257) } }], 'embeds', '0', 'author', 'name');
    // 6000 characters across all embeds of the message.
    await over([{ description: x(4000) }, { description: x(2001) }], 'embeds');
    await over(
      Array.from({ length: 11 }, () => ({ title: 't' })),
      'embeds',
    );

    // At the limits (whitespace trimmed, not counted) the message is taken.
    const atLimit = await post<{ id: string }>(path, {
      embeds: [{ title: ` ${x(256)} `, description: x(4000) }, { description: x(1744) }],
    });
    expect(atLimit.status).toBe(200);
    const edit = await post<FieldErrors>(
      `${path}/${atLimit.body.id}`,
      { embeds: [{ title: x(257) }] },
      'PATCH',
    );
    expect(edit.status).toBe(400);
    expect(errorAt(edit.body, 'embeds', '0', 'title')?._errors[0]?.code).toBe('BASE_TYPE_MAX_LENGTH');
  });

  it('sends MESSAGE_CREATE with channel_type and Discord-form timestamps (+00:00)', async () => {
    const bugs = discord.channelId('bugs');
    const inChannel = discord.say({ channelId: bugs, content: 'when was this' });
    const thread = discord.startThread({ messageId: inChannel.id, name: 'timing' });
    const inThread = discord.say({ threadId: thread.id, content: 'and this' });
    await eventually(() => created((d) => d.id === inThread.id).length === 1, { what: 'thread message' });
    const [a] = created((d) => d.id === inChannel.id);
    const [b] = created((d) => d.id === inThread.id);
    expect(a?.channel_type).toBe(0);
    expect(b?.channel_type).toBe(11);
    const discordTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;
    expect(a?.timestamp).toMatch(discordTime);
    expect(new Date(a?.timestamp as string).getTime()).toBe(new Date(inChannel.timestamp).getTime());

    discord.edit({ messageId: inChannel.id, content: 'edited' });
    await eventually(
      () => packets.some((p) => p.t === 'MESSAGE_UPDATE' && p.d.id === inChannel.id && p.d.edited_timestamp),
      { what: 'MESSAGE_UPDATE' },
    );
    const update = packets.filter((p) => p.t === 'MESSAGE_UPDATE' && p.d.id === inChannel.id).at(-1)?.d;
    expect(update?.edited_timestamp).toMatch(discordTime);
    expect(update?.channel_type).toBe(0);
  });

  it('answers an injected 30046 as Discord does', async () => {
    const bugs = discord.channelId('bugs');
    const posted = await post<{ id: string }>(`/channels/${bugs}/messages`, { content: 'old news' });
    discord.inject({ method: 'PATCH', path: `/channels/${bugs}/messages/:m`, error: 'maxOldMessageEdits' });
    const refused = await post<FieldErrors>(
      `/channels/${bugs}/messages/${posted.body.id}`,
      { content: 'x' },
      'PATCH',
    );
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe(30046);
    const later = await post<{ content: string }>(
      `/channels/${bugs}/messages/${posted.body.id}`,
      { content: 'x' },
      'PATCH',
    );
    expect(later.body.content).toBe('x');
  });
});
