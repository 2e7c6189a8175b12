import {
  AttachmentBuilder,
  ChannelType,
  Events,
  GatewayIntentBits,
  type Message,
  type TextChannel,
} from 'discord.js';
import { eventually } from '@caseloop/testing';
import { connectClient, destroyClient } from './discord-client.fixture';
import { LocalDiscord, type LocalDiscordOptions } from './local-discord';
import { defaultSeed } from './seed';

jest.setTimeout(60_000);

/** Each case gets its own server and client: these faults leave a connection in odd states. */
async function withDiscord(
  options: Partial<LocalDiscordOptions>,
  body: (discord: LocalDiscord, client: Awaited<ReturnType<typeof connectClient>>) => Promise<void>,
  clientOverrides: Parameters<typeof connectClient>[1] = {},
): Promise<void> {
  const discord = await LocalDiscord.start({ ...defaultSeed(), ...options });
  let client: Awaited<ReturnType<typeof connectClient>> | undefined;
  try {
    client = await connectClient(discord, clientOverrides);
    await body(discord, client);
  } finally {
    await destroyClient(client);
    await discord.close();
  }
}

const text = (client: Awaited<ReturnType<typeof connectClient>>, id: string): TextChannel => {
  const channel = client.channels.cache.get(id);
  if (!channel || channel.type !== ChannelType.GuildText) throw new Error(`channel ${id} not cached`);
  return channel;
};

describe('LocalDiscord edge cases against discord.js', () => {
  it('lets discord.js detect a zombie connection (no HEARTBEAT_ACK) and resume without losing events', async () => {
    await withDiscord({ heartbeatIntervalMs: 300 }, async (discord, client) => {
      await eventually(() => discord.gatewayOps.some((o) => o.direction === 'out' && o.op === 11), {
        what: 'a first heartbeat ack',
      });
      const seen: string[] = [];
      client.on(Events.MessageCreate, (m) => void seen.push(m.content));
      const resumed = new Promise<void>((resolve) => client.once(Events.ShardResume, () => resolve()));
      discord.withholdHeartbeatAcks();
      discord.say({ content: 'while the link is a zombie' });
      await resumed;
      expect(discord.resumeCount).toBe(1);
      expect(discord.identifyCount).toBe(1);
      discord.say({ content: 'after the resume' });
      await eventually(() => seen.includes('after the resume'), { what: 'post-resume message' });
      expect(seen.filter((c) => c === 'while the link is a zombie')).toHaveLength(1);
    });
  });

  it('handles a resumable INVALID_SESSION with a RESUME on the same socket', async () => {
    await withDiscord({}, async (discord, client) => {
      const resumed = new Promise<void>((resolve) => client.once(Events.ShardResume, () => resolve()));
      discord.invalidateSession(true);
      await resumed;
      expect(discord.identifyCount).toBe(1);
      expect(discord.gatewayOps.filter((o) => o.direction === 'in' && o.op === 6)).toHaveLength(1);
    });
  });

  it('reports real bucket limits in headers; discord.js waits for the reset instead of hitting 429', async () => {
    await withDiscord({ rateLimit: { limit: 2, windowMs: 1000 } }, async (discord, client) => {
      const bugs = discord.channelId('bugs');
      const started = Date.now();
      for (let i = 0; i < 4; i++) await text(client, bugs).sendTyping();
      const elapsed = Date.now() - started;
      const typing = discord.requests.filter((r) => r.route === '/channels/:channel/typing');
      expect(typing.map((r) => r.status)).toEqual([204, 204, 204, 204]);
      expect(elapsed).toBeGreaterThanOrEqual(900);
    });
  });

  it('answers 429 itself when a client ignores the bucket (raw fetch), with Retry-After', async () => {
    await withDiscord({ rateLimit: { limit: 1, windowMs: 5000 } }, async (discord) => {
      const url = `${discord.apiUrl}/v10/channels/${discord.channelId('bugs')}/typing`;
      const headers = { Authorization: `Bot ${discord.token}` };
      expect((await fetch(url, { method: 'POST', headers })).status).toBe(204);
      const limited = await fetch(url, { method: 'POST', headers });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(await limited.json()).toMatchObject({ message: 'You are being rate limited.', global: false });
    });
  });

  it('retries a 503 before the store and honours an injected delay', async () => {
    await withDiscord({}, async (discord, client) => {
      const bugs = discord.channelId('bugs');
      discord.inject({ method: 'POST', path: `/channels/${bugs}/messages`, status: 503, when: 'before' });
      discord.inject({ method: 'POST', path: `/channels/${bugs}/messages`, delayMs: 400 });
      const started = Date.now();
      const sent = await text(client, bugs).send({
        content: 'after a 503',
        nonce: 'n-503',
        enforceNonce: true,
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(380);
      const posts = discord.requests.filter(
        (r) => r.method === 'POST' && r.route === '/channels/:channel/messages',
      );
      expect(posts.map((r) => [r.status, r.fault])).toEqual([
        [503, 'before'],
        [200, 'delay'],
      ]);
      expect(discord.messages(bugs).map((m) => m.id)).toEqual([sent.id]);
    });
  });

  // discord.js retries a timed-out POST, but not under Jest: undici's AbortError comes from another
  // realm and fails its `instanceof Error` check. The retry is therefore played by hand here.
  it('stores a POST whose answer comes too late, so a retry with the same enforced nonce gets that message', async () => {
    await withDiscord({}, async (discord) => {
      const bugs = discord.channelId('bugs');
      discord.inject({ method: 'POST', path: `/channels/${bugs}/messages`, when: 'after', delayMs: 1500 });
      const post = (signal?: AbortSignal): Promise<Response> =>
        fetch(`${discord.apiUrl}/v10/channels/${bugs}/messages`, {
          method: 'POST',
          headers: { Authorization: `Bot ${discord.token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ content: 'slow answer', nonce: 'slow-1', enforce_nonce: true }),
          signal,
        });
      await expect(post(AbortSignal.timeout(300))).rejects.toMatchObject({ name: 'TimeoutError' });
      const stored = discord.messages(bugs);
      expect(stored.map((m) => m.content)).toEqual(['slow answer']);
      const retried = (await (await post()).json()) as { id: string };
      expect(retried.id).toBe(stored[0]?.id);
      expect(discord.messages(bugs)).toHaveLength(1);
    });
  });

  it('dedupes a nonce only inside the window', async () => {
    let offset = 0;
    await withDiscord(
      { dedupeWindowMs: 120_000, now: () => Date.now() + offset },
      async (discord, client) => {
        const bugs = discord.channelId('bugs');
        const first = await text(client, bugs).send({ content: 'once', nonce: 'window', enforceNonce: true });
        offset = 60_000;
        expect(
          (await text(client, bugs).send({ content: 'once', nonce: 'window', enforceNonce: true })).id,
        ).toBe(first.id);
        offset = 121_000;
        const late = await text(client, bugs).send({ content: 'once', nonce: 'window', enforceNonce: true });
        expect(late.id).not.toBe(first.id);
        expect(discord.messages(bugs)).toHaveLength(2);
      },
    );
  });

  it('blanks content for a client without the MESSAGE_CONTENT intent unless the bot is mentioned', async () => {
    await withDiscord(
      {},
      async (discord, client) => {
        const bugs = discord.channelId('bugs');
        const seen: Message[] = [];
        client.on(Events.MessageCreate, (m) => void seen.push(m));
        const plain = discord.say({ channelId: bugs, content: 'no mention here' });
        const mentioned = discord.say({ channelId: bugs, content: 'look at this', mentionsBot: true });
        await eventually(() => seen.length >= 2, { what: 'two messages' });
        expect(seen.find((m) => m.id === plain.id)?.content).toBe('');
        expect(seen.find((m) => m.id === mentioned.id)?.content).toBe(`<@${discord.botId}> look at this`);
        expect(seen.find((m) => m.id === mentioned.id)?.mentions.users.has(discord.botId)).toBe(true);
      },
      { intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages] },
    );
  });

  it('stores files sent as multipart and serves them at the attachment URL', async () => {
    await withDiscord({}, async (discord, client) => {
      const bugs = discord.channelId('bugs');
      const file = new AttachmentBuilder(Buffer.from('stack trace line 1\nline 2\n'), { name: 'trace.txt' });
      const sent = await text(client, bugs).send({ content: 'the trace', files: [file] });
      const [attachment] = discord.message(sent.id)?.attachments ?? [];
      expect(attachment).toMatchObject({ filename: 'trace.txt', size: 26 });
      expect(sent.attachments.first()?.name).toBe('trace.txt');
      const body = await (await fetch(attachment?.url ?? '')).text();
      expect(body).toBe('stack trace line 1\nline 2\n');
    });
  });

  it('reports GUILD_MEMBER_UPDATE when roles change', async () => {
    await withDiscord(
      {},
      async (discord, client) => {
        const sam = discord.userId('sam');
        const updated = new Promise<string[]>((resolve) =>
          client.once(Events.GuildMemberUpdate, (_old, member) => resolve([...member.roles.cache.keys()])),
        );
        discord.setMemberRoles(sam, [discord.roleId('reporters')]);
        expect(await updated).toContain(discord.roleId('reporters'));
      },
      {
        intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers, GatewayIntentBits.GuildMessages],
      },
    );
  });

  it('dispatches user edits and deletes, lets the bot edit its own message, and archives threads', async () => {
    await withDiscord({}, async (discord, client) => {
      const bugs = discord.channelId('bugs');
      const updates: string[] = [];
      const deletes: string[] = [];
      client.on(Events.MessageUpdate, (_old, m) => void updates.push(m.content ?? ''));
      client.on(Events.MessageDelete, (m) => void deletes.push(m.id));
      const report = discord.say({ channelId: bugs, content: 'typo in repport' });
      await eventually(
        () =>
          client.channels.cache.get(bugs) &&
          (client.channels.cache.get(bugs) as TextChannel).messages.cache.has(report.id),
        { what: 'cached report' },
      );
      discord.edit({ messageId: report.id, content: 'typo in report' });
      await eventually(() => updates.includes('typo in report'), { what: 'edit seen' });
      expect(discord.message(report.id)?.editedTimestamp).not.toBeNull();

      const own = await text(client, bugs).send({ content: 'draft' });
      const edited = await own.edit({ content: 'final' });
      expect(edited.content).toBe('final');
      await expect(
        client.rest.patch(`/channels/${bugs}/messages/${report.id}`, { body: { content: 'hijack' } }),
      ).rejects.toMatchObject({ code: 50005 });

      const thread = await (
        await text(client, bugs).messages.fetch(report.id)
      ).startThread({ name: 'case: typo' });
      const guild = client.guilds.cache.get(discord.guildId);
      discord.archiveThread(thread.id);
      expect((await guild?.channels.fetchActiveThreads())?.threads.has(thread.id)).toBe(false);
      discord.say({ threadId: thread.id, content: 'still broken' });
      expect((await guild?.channels.fetchActiveThreads())?.threads.has(thread.id)).toBe(true);

      const gone = discord.say({ channelId: bugs, content: 'oops, wrong channel' });
      discord.deleteMessage(gone.id);
      await eventually(() => deletes.includes(gone.id), { what: 'delete seen' });
      expect(discord.message(gone.id)).toBeUndefined();
    });
  });

  it('puts the bot in other guilds too: their traffic arrives with their guild id', async () => {
    await withDiscord(
      { otherGuilds: [{ name: 'elsewhere', channels: [{ name: 'general' }], members: ['sam'] }] },
      async (discord, client) => {
        const state = discord.state();
        const [other] = state.otherGuilds;
        expect(other?.name).toBe('elsewhere');
        expect(client.guilds.cache.map((g) => g.name).sort()).toEqual(['caseloop-sandbox', 'elsewhere']);
        const general = discord.channelId('general');
        expect(state.channels.find((c) => c.id === general)?.guildId).toBe(other?.id);

        const got = new Promise<Message>((resolve) => client.once(Events.MessageCreate, (m) => resolve(m)));
        const said = discord.say({
          authorId: discord.userId('sam'),
          channelId: general,
          content: 'hello from elsewhere',
        });
        const message = await got;
        expect([message.id, message.guildId, message.author.id]).toEqual([
          said.id,
          other?.id,
          discord.userId('sam'),
        ]);
        expect(() =>
          discord.say({ authorId: discord.userId('alice'), channelId: general, content: 'not a member' }),
        ).toThrow('Unknown User');

        const channels = await client.rest.get(`/guilds/${other?.id}/channels`);
        expect((channels as { name: string }[]).map((c) => c.name)).toEqual(['general']);
        await expect(client.rest.get('/guilds/123456789012345678')).rejects.toMatchObject({ code: 10004 });
      },
    );
  });
});
