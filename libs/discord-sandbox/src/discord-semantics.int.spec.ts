import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  Events,
  GatewayIntentBits,
  type Interaction,
  ModalBuilder,
  TextInputBuilder,
  TextInputStyle,
} from 'discord.js';
import { eventually } from '@caseloop/testing';
import { connectClient, destroyClient } from './discord-client.fixture';
import { LocalDiscord } from './local-discord';
import { defaultSeed } from './seed';

jest.setTimeout(60_000);

/** Where the local Discord used to differ from Discord's published behaviour, each checked as a real client sees it. */
describe('LocalDiscord behaves as Discord does', () => {
  let discord: LocalDiscord;
  let client: Awaited<ReturnType<typeof connectClient>>;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${discord.apiUrl}/v10${path}`, {
      ...init,
      headers: { Authorization: `Bot ${discord.token}`, 'Content-Type': 'application/json', ...init.headers },
    });

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
  });
  afterAll(async () => {
    await destroyClient(client);
    await discord?.close();
  });

  it('echoes the nonce in the POST answer and MESSAGE_CREATE only; a re-fetched message has none', async () => {
    const channelId = discord.channelId('bugs');
    const created = new Promise<unknown>((resolve) =>
      client.on(Events.MessageCreate, (m) => m.author.id === discord.botId && resolve(m.nonce)),
    );
    const res = await api(`/channels/${channelId}/messages`, {
      method: 'POST',
      body: JSON.stringify({ content: 'with a nonce', nonce: 'n-1', enforce_nonce: true }),
    });
    const posted = (await res.json()) as { id: string; nonce?: string };
    expect(posted.nonce).toBe('n-1');
    expect(await created).toBe('n-1');
    const fetched = (await (await api(`/channels/${channelId}/messages/${posted.id}`)).json()) as object;
    expect(fetched).not.toHaveProperty('nonce');
    const history = (await (await api(`/channels/${channelId}/messages?limit=5`)).json()) as object[];
    expect(history.every((m) => !('nonce' in m))).toBe(true);
  });

  it('answers enforce_nonce after the first message was deleted with 10008 and posts nothing', async () => {
    const channelId = discord.channelId('bugs');
    const body = JSON.stringify({ content: 'once', nonce: 'n-del', enforce_nonce: true });
    const first = (await (await api(`/channels/${channelId}/messages`, { method: 'POST', body })).json()) as {
      id: string;
    };
    await api(`/channels/${channelId}/messages/${first.id}`, { method: 'DELETE' });
    const before = discord.messages(channelId).length;
    const again = await api(`/channels/${channelId}/messages`, { method: 'POST', body });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: 10008, message: 'Unknown Message' });
    expect(discord.messages(channelId)).toHaveLength(before);
  });

  it('answers gateway op 8 with GUILD_MEMBERS_CHUNK', async () => {
    const guild = client.guilds.cache.get(discord.guildId);
    const members = await guild?.members.fetch({ user: [discord.userId('alice'), discord.userId('rita')] });
    expect([...(members?.keys() ?? [])].sort()).toEqual(
      [discord.userId('alice'), discord.userId('rita')].sort(),
    );
    const all = await guild?.members.fetch();
    expect(all?.size).toBe(discord.state().users.length + 1);
    expect(discord.gatewayOps.some((o) => o.direction === 'out' && o.t === 'GUILD_MEMBERS_CHUNK')).toBe(true);
  });

  it('sends 429 with Retry-After in whole seconds, a body with code, and the bucket limit', async () => {
    const limited = await LocalDiscord.start({ ...defaultSeed(), rateLimit: { limit: 3, windowMs: 60_000 } });
    try {
      const call = () =>
        fetch(`${limited.apiUrl}/v10/users/@me`, { headers: { Authorization: `Bot ${limited.token}` } });
      for (let i = 0; i < 3; i++) expect((await call()).status).toBe(200);
      const res = await call();
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
      const body = (await res.json()) as { code: number; retry_after: number; global: boolean };
      expect(body).toMatchObject({ code: 0, global: false });
      expect(Number(res.headers.get('retry-after'))).toBe(Math.ceil(body.retry_after));

      limited.inject({ path: '/users/@me', status: 429, retryAfterMs: 1500 });
      const injected = await call();
      expect(injected.headers.get('retry-after')).toBe('2');
      expect(((await injected.json()) as { retry_after: number }).retry_after).toBe(1.5);
    } finally {
      await limited.close();
    }
  });

  it('has no channel active-threads route; the guild one has has_more and lists newest first', async () => {
    const channelId = discord.channelId('bugs');
    expect((await api(`/channels/${channelId}/threads/active`)).status).toBe(404);
    const a = discord.say({ channelId, content: 'thread one' });
    const b = discord.say({ channelId, content: 'thread two' });
    discord.startThread({ messageId: a.id, name: 'one' });
    discord.startThread({ messageId: b.id, name: 'two' });
    const body = (await (await api(`/guilds/${discord.guildId}/threads/active`)).json()) as {
      threads: { id: string }[];
      has_more: boolean;
    };
    expect(body.has_more).toBe(false);
    const ids = body.threads.map((t) => BigInt(t.id));
    expect([...ids].sort((x, y) => (x < y ? 1 : -1))).toEqual(ids);
  });

  it('echoes embeds with a type and components with ids; validates buttons', async () => {
    const channelId = discord.channelId('bugs');
    const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
      new ButtonBuilder().setCustomId('a').setLabel('A').setStyle(ButtonStyle.Success),
      new ButtonBuilder().setCustomId('b').setLabel('B').setStyle(ButtonStyle.Danger),
    );
    const channel = client.channels.cache.get(channelId);
    if (!channel?.isSendable()) throw new Error('not sendable');
    const sent = await channel.send({ content: 'pick', embeds: [{ title: 'x' }], components: [row] });
    const raw = discord.rawMessages(channelId).find((m) => m.id === sent.id) as {
      embeds: { type: string }[];
      components: { id: number; components: { id: number }[] }[];
    };
    expect(raw.embeds[0]?.type).toBe('rich');
    expect(raw.components[0]?.id).toBe(1);
    expect(raw.components[0]?.components.map((c) => c.id)).toEqual([2, 3]);
    const dup = await api(`/channels/${channelId}/messages`, {
      method: 'POST',
      body: JSON.stringify({
        components: [
          {
            type: 1,
            components: [
              { type: 2, style: 1, custom_id: 'x', label: 'x' },
              { type: 2, style: 1, custom_id: 'x', label: 'y' },
            ],
          },
        ],
      }),
    });
    expect(dup.status).toBe(400);
    expect(await dup.json()).toMatchObject({ code: 50035 });
  });

  it('runs a button → modal → ephemeral reply round trip with a real client (types 3 and 5, callbacks 9 and 4)', async () => {
    const channelId = discord.channelId('bugs');
    const channel = client.channels.cache.get(channelId);
    if (!channel?.isSendable()) throw new Error('not sendable');
    const sent = await channel.send({
      content: 'decide',
      components: [
        new ActionRowBuilder<ButtonBuilder>().addComponents(
          new ButtonBuilder().setCustomId('ask').setLabel('Ask').setStyle(ButtonStyle.Primary),
        ),
      ],
    });
    const submitted: string[] = [];
    const handler = async (i: Interaction): Promise<void> => {
      if (i.isButton() && i.customId === 'ask') {
        await i.showModal(
          new ModalBuilder()
            .setCustomId('why')
            .setTitle('Why?')
            .addComponents(
              new ActionRowBuilder<TextInputBuilder>().addComponents(
                new TextInputBuilder()
                  .setCustomId('text')
                  .setLabel('Text')
                  .setStyle(TextInputStyle.Paragraph),
              ),
            ),
        );
      } else if (i.isModalSubmit() && i.customId === 'why') {
        submitted.push(i.fields.getTextInputValue('text'));
        await i.reply({ content: 'noted', flags: 64 });
      }
    };
    client.on(Events.InteractionCreate, (i) => void handler(i));
    const clicked = discord.click({ authorId: discord.userId('rita'), messageId: sent.id, customId: 'ask' });
    await eventually(() => discord.interactionLog().find((x) => x.id === clicked.id)?.response === 'modal', {
      what: 'the modal',
    });
    const modal = discord.interactionLog().find((x) => x.id === clicked.id)?.modal;
    expect(modal).toMatchObject({ customId: 'why', title: 'Why?' });
    const before = discord.messages(channelId).length;
    const submit = discord.submitModal({
      authorId: discord.userId('rita'),
      interactionId: clicked.id,
      values: { text: 'the header row' },
    });
    await eventually(() => discord.interactionLog().find((x) => x.id === submit.id)?.reply, {
      what: 'the ephemeral reply',
    });
    expect(submitted).toEqual(['the header row']);
    expect(discord.interactionLog().find((x) => x.id === submit.id)?.reply).toMatchObject({
      content: 'noted',
      ephemeral: true,
    });
    expect(discord.messages(channelId)).toHaveLength(before);
    expect(() =>
      discord.click({ authorId: discord.userId('rita'), messageId: sent.id, customId: 'nope' }),
    ).toThrow();
  });

  it('gives a deferred callback with with_response no response_message_id, and an update (7) edits the message', async () => {
    const channelId = discord.channelId('bugs');
    const sent = await api(`/channels/${channelId}/messages`, {
      method: 'POST',
      body: JSON.stringify({
        content: 'v1',
        components: [{ type: 1, components: [{ type: 2, style: 1, custom_id: 'go', label: 'Go' }] }],
      }),
    });
    const { id } = (await sent.json()) as { id: string };
    const slash = discord.slash({ authorId: discord.userId('rita'), channelId, name: 'caseloop' });
    const deferred = await fetch(
      `${discord.apiUrl}/v10/interactions/${slash.id}/${slash.token}/callback?with_response=true`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ type: 5 }) },
    );
    const d = (await deferred.json()) as { interaction: object };
    expect(d.interaction).not.toHaveProperty('response_message_id');
    const click = discord.click({ authorId: discord.userId('rita'), messageId: id, customId: 'go' });
    const updated = await fetch(
      `${discord.apiUrl}/v10/interactions/${click.id}/${click.token}/callback?with_response=true`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 7, data: { content: 'v2', components: [] } }),
      },
    );
    const u = (await updated.json()) as { interaction: { response_message_id: string } };
    expect(u.interaction.response_message_id).toBe(id);
    expect(discord.message(id)).toMatchObject({ content: 'v2', components: [] });
  });

  it('serves /applications/@me and the guild with the fields Discord always sends', async () => {
    const app = (await (await api('/applications/@me')).json()) as Record<string, unknown>;
    for (const key of ['verify_key', 'owner', 'team', 'flags_new', 'redirect_uris', 'eligible_oauth2_scopes'])
      expect(app).toHaveProperty(key);
    const guild = (await (await api(`/guilds/${discord.guildId}`)).json()) as Record<string, unknown>;
    expect(guild).toMatchObject({ home_header: null, nsfw: false });
    expect(guild).toHaveProperty('region');
  });

  it('refuses an edit or a reaction in an archived thread with 50083 and leaves it archived; a new message unarchives', async () => {
    const channelId = discord.channelId('bugs');
    const report = discord.say({ authorId: discord.userId('alice'), channelId, content: 'report' });
    const thread = (await (
      await api(`/channels/${channelId}/messages/${report.id}/threads`, {
        method: 'POST',
        body: JSON.stringify({ name: 'case: report' }),
      })
    ).json()) as { id: string };
    const status = (await (
      await api(`/channels/${thread.id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ content: 'status: open' }),
      })
    ).json()) as { id: string };
    discord.archiveThread(thread.id);

    const edit = await api(`/channels/${thread.id}/messages/${status.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ content: 'status: fixed' }),
    });
    expect(edit.status).toBe(400);
    expect(await edit.json()).toMatchObject({ code: 50083 });
    const reaction = await api(`/channels/${thread.id}/messages/${status.id}/reactions/%F0%9F%91%80/@me`, {
      method: 'PUT',
    });
    expect(reaction.status).toBe(400);
    expect(await reaction.json()).toMatchObject({ code: 50083 });
    expect(discord.message(status.id)?.content).toBe('status: open');
    expect(discord.threads().find((t) => t.id === thread.id)?.archived).toBe(true);

    const post = await api(`/channels/${thread.id}/messages`, {
      method: 'POST',
      body: JSON.stringify({ content: 'still here' }),
    });
    expect(post.status).toBe(200);
    expect(discord.threads().find((t) => t.id === thread.id)?.archived).toBe(false);
  });

  it('lets the bot unarchive a thread it is in (Modify Thread), and a locked one only with MANAGE_THREADS', async () => {
    const channelId = discord.channelId('bugs');
    const report = discord.say({ authorId: discord.userId('alice'), channelId, content: 'another report' });
    const thread = (await (
      await api(`/channels/${channelId}/messages/${report.id}/threads`, {
        method: 'POST',
        body: JSON.stringify({ name: 'case: another' }),
      })
    ).json()) as { id: string };
    discord.archiveThread(thread.id);
    const reopened = await api(`/channels/${thread.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ archived: false }),
    });
    expect(reopened.status).toBe(200);
    expect(await reopened.json()).toMatchObject({
      id: thread.id,
      thread_metadata: { archived: false, locked: false },
    });

    discord.archiveThread(thread.id);
    discord.lockThread(thread.id);
    discord.setPermissionOverwrite(channelId, { roleId: discord.botRoleId, deny: ['MANAGE_THREADS'] });
    try {
      const locked = await api(`/channels/${thread.id}`, {
        method: 'PATCH',
        body: JSON.stringify({ archived: false }),
      });
      expect(locked.status).toBe(403);
      expect(await locked.json()).toMatchObject({ code: 50013 });
      expect(discord.threads().find((t) => t.id === thread.id)?.archived).toBe(true);
      const renamed = await api(`/channels/${thread.id}`, {
        method: 'PATCH',
        body: JSON.stringify({ name: 'renamed' }),
      });
      expect(renamed.status).toBe(400);
      expect(await renamed.json()).toMatchObject({ code: 50083 });
    } finally {
      discord.deletePermissionOverwrite(channelId, discord.botRoleId);
    }
  });

  it('refuses a reply without READ_MESSAGE_HISTORY with 403 160002, not 50013, and posts nothing', async () => {
    const channelId = discord.channelId('bugs');
    const report = discord.say({ authorId: discord.userId('alice'), channelId, content: 'reply to me' });
    discord.setPermissionOverwrite(channelId, { roleId: discord.botRoleId, deny: ['READ_MESSAGE_HISTORY'] });
    try {
      const before = discord.messages(channelId).length;
      const reply = await api(`/channels/${channelId}/messages`, {
        method: 'POST',
        body: JSON.stringify({
          content: 'on it',
          message_reference: { message_id: report.id, fail_if_not_exists: false },
        }),
      });
      expect(reply.status).toBe(403);
      expect(await reply.json()).toMatchObject({ code: 160002 });
      expect(discord.messages(channelId)).toHaveLength(before);
      const plain = await api(`/channels/${channelId}/messages`, {
        method: 'POST',
        body: JSON.stringify({ content: 'not a reply' }),
      });
      expect(plain.status).toBe(200);
    } finally {
      discord.deletePermissionOverwrite(channelId, discord.botRoleId);
    }
  });
});

describe("LocalDiscord keeps Discord's 3-second deadline for an interaction's first answer", () => {
  let discord: LocalDiscord;
  let offsetMs = 0;

  beforeAll(async () => {
    discord = await LocalDiscord.start({ ...defaultSeed(), now: () => Date.now() + offsetMs });
  });
  afterAll(async () => {
    await discord?.close();
  });

  const answer = (i: { id: string; token: string }) =>
    fetch(`${discord.apiUrl}/v10/interactions/${i.id}/${i.token}/callback`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 4, data: { content: 'noted', flags: 64 } }),
    });

  it('answers a callback later than 3 s with 404 10062 and records no reply; one in time is taken', async () => {
    const channelId = discord.channelId('bugs');
    const late = discord.slash({ authorId: discord.userId('rita'), channelId, name: 'caseloop' });
    offsetMs += 3_500;
    const refused = await answer(late);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ code: 10062 });
    expect(discord.interactionLog().find((x) => x.id === late.id)?.reply).toBeNull();

    const prompt = discord.slash({ authorId: discord.userId('rita'), channelId, name: 'caseloop' });
    offsetMs += 2_000;
    expect((await answer(prompt)).status).toBe(204);
  });
});
