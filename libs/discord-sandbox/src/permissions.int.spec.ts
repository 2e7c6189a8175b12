import { DiscordAPIError, type TextChannel } from 'discord.js';
import { connectClient, destroyClient } from './discord-client.fixture';
import { LocalDiscord } from './local-discord';
import { defaultSeed } from './seed';

jest.setTimeout(30_000);

/** Discord's permission rules on the routes a bot uses, seen through an unmodified discord.js client. */
describe('the local Discord enforces channel permissions as Discord does', () => {
  let discord: LocalDiscord;
  beforeAll(async () => {
    discord = await LocalDiscord.start(defaultSeed());
  });
  afterAll(async () => {
    await discord?.close();
  });
  afterEach(() => discord.deletePermissionOverwrite(discord.channelId('bugs'), discord.botRoleId));

  const outcome = async (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'ok',
      (e: unknown) => (e instanceof DiscordAPIError ? `${e.status} ${e.code}` : String(e)),
    );

  it('without READ_MESSAGE_HISTORY a history read is empty and a single message is 50013', async () => {
    const bugs = discord.channelId('bugs');
    const report = discord.say({ authorId: discord.userId('alice'), channelId: bugs, content: 'it crashes' });
    discord.setPermissionOverwrite(bugs, { roleId: discord.botRoleId, deny: ['READ_MESSAGE_HISTORY'] });
    const client = await connectClient(discord);
    try {
      const channel = client.channels.cache.get(bugs) as TextChannel;
      expect((await channel.messages.fetch({ limit: 10 })).size).toBe(0);
      expect(await outcome(channel.messages.fetch({ message: report.id, force: true }))).toBe('403 50013');
      expect(discord.botPermissionsIn(bugs)).not.toContain('READ_MESSAGE_HISTORY');
    } finally {
      await destroyClient(client);
    }
  });

  it('a thread needs SEND_MESSAGES_IN_THREADS, not SEND_MESSAGES; without VIEW_CHANNEL it is 50001', async () => {
    const bugs = discord.channelId('bugs');
    const client = await connectClient(discord);
    try {
      const channel = client.channels.cache.get(bugs) as TextChannel;
      const starter = await channel.send('case C01');
      const thread = await starter.startThread({ name: 'Case C01' });
      discord.setPermissionOverwrite(bugs, { roleId: discord.botRoleId, deny: ['SEND_MESSAGES'] });
      expect(await outcome(channel.send('in the channel'))).toBe('403 50013');
      expect(await outcome(thread.send('in the thread'))).toBe('ok');
      discord.setPermissionOverwrite(bugs, { roleId: discord.botRoleId, deny: ['SEND_MESSAGES_IN_THREADS'] });
      expect(await outcome(thread.send('in the thread'))).toBe('403 50013');
      expect(await outcome(channel.send('in the channel'))).toBe('ok');
      discord.setPermissionOverwrite(bugs, { roleId: discord.botRoleId, deny: ['CREATE_PUBLIC_THREADS'] });
      const next = await channel.send('case C02');
      expect(await outcome(next.startThread({ name: 'Case C02' }))).toBe('403 50013');
      discord.setPermissionOverwrite(bugs, { roleId: discord.botRoleId, deny: ['VIEW_CHANNEL'] });
      expect(await outcome(client.channels.fetch(bugs, { force: true }))).toBe('403 50001');
      expect(await outcome(channel.send('x'))).toBe('403 50001');
      expect(discord.botPermissionsIn(bugs)).toEqual([]);
    } finally {
      await destroyClient(client);
    }
  });

  it('without EMBED_LINKS the message is posted without its embeds; an existing reaction needs no ADD_REACTIONS', async () => {
    const bugs = discord.channelId('bugs');
    const report = discord.say({ authorId: discord.userId('alice'), channelId: bugs, content: 'a report' });
    discord.react({ userId: discord.userId('bob'), messageId: report.id, emoji: '👍' });
    discord.setPermissionOverwrite(bugs, {
      roleId: discord.botRoleId,
      deny: ['EMBED_LINKS', 'ADD_REACTIONS'],
    });
    const client = await connectClient(discord);
    try {
      const channel = client.channels.cache.get(bugs) as TextChannel;
      const sent = await channel.send({ content: 'status', embeds: [{ title: 'Status' }] });
      expect(sent.embeds).toEqual([]);
      const message = await channel.messages.fetch(report.id);
      expect(await outcome(message.react('👍'))).toBe('ok');
      expect(await outcome(message.react('👀'))).toBe('403 50013');
    } finally {
      await destroyClient(client);
    }
  });
});
