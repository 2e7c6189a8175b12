import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '@caseloop/cli';
import { registerDiscordCommands } from './discord.commands';
import { connectClient, destroyClient, LocalDiscord } from '@caseloop/discord-sandbox';
import { DiscordAPIError, PermissionFlagsBits, type TextChannel } from 'discord.js';
import { NEEDED_PERMISSIONS } from '../discord/bot-permissions';
import { eventually } from '@caseloop/testing';
import { stringify } from 'yaml';
import { IntakeHarness, intakeSeed } from '../../test/intake.fixture';

jest.setTimeout(90_000);

describe('caseloop discord check', () => {
  let h: IntakeHarness;
  let bindingPath: string;

  beforeAll(async () => {
    h = await IntakeHarness.create();
    bindingPath = join(h.dir, 'binding.yaml');
    writeFileSync(bindingPath, stringify(h.binding));
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const check = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(
      ['discord', 'check', ...args],
      { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false },
      {},
      [registerDiscordCommands],
    );
    return { code, out, err, all: [...out, ...err].join('\n') };
  };

  it('reads the bot, guild and channels, reaches READY, posts nothing, prints no token', async () => {
    const r = await check([
      '--binding',
      bindingPath,
      '--token-file',
      h.tokenPath,
      '--api-url',
      h.discord.apiUrl,
    ]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.all).toContain('guild: caseloop-sandbox');
    expect(r.all).toContain(`channel: #bugs (${h.ids.bugs}) mode open`);
    expect(r.all).toMatch(/bot: caseloop \(\d+\)/);
    expect(r.all).toMatch(/gateway: READY in \d+ ms/);
    expect(r.all).toContain(
      `commands: /caseloop not registered in guild ${h.discord.guildId} yet (intake registers it at start`,
    );
    expect(r.all).toContain(`permissions: #bugs (${h.ids.bugs}) all 8 present`);
    expect(r.all).toContain(`permissions: #feedback (${h.ids.feedback}) all 8 present`);
    expect(r.all).toContain('discord check: ok');
    expect(r.all).not.toContain(h.discord.token);
    expect(h.discord.requests.filter((q) => q.method !== 'GET')).toEqual([]);
  });

  describe('effective permissions per bound channel', () => {
    const args = (): string[] => [
      '--binding',
      bindingPath,
      '--token-file',
      h.tokenPath,
      '--api-url',
      h.discord.apiUrl,
    ];
    /** What discord.js computes from its gateway cache for the bot, among the permissions intake needs. */
    const discordJsMissing = async (channelId: string): Promise<string[]> => {
      const client = await connectClient(h.discord);
      try {
        const channel = client.channels.cache.get(channelId) as TextChannel;
        const me = await channel.guild.members.fetchMe();
        const p = channel.permissionsFor(me);
        return NEEDED_PERMISSIONS.filter((name) => !p.has(PermissionFlagsBits[name]));
      } finally {
        await destroyClient(client);
      }
    };
    afterEach(() => {
      for (const id of [h.discord.botRoleId, h.discord.guildId, h.discord.botId])
        for (const c of [h.ids.bugs, h.ids.feedback]) h.discord.deletePermissionOverwrite(c, id);
    });

    it('names exactly what a channel overwrite denies, fails the check, and the local Discord refuses those actions', async () => {
      h.discord.setPermissionOverwrite(h.ids.bugs, {
        roleId: h.discord.botRoleId,
        deny: ['ADD_REACTIONS', 'ATTACH_FILES'],
      });
      const r = await check(args());
      expect(r.code).toBe(2);
      expect(r.out).toContain(`permissions: #bugs (${h.ids.bugs}) missing ADD_REACTIONS, ATTACH_FILES`);
      expect(r.out).toContain(`permissions: #feedback (${h.ids.feedback}) all 8 present`);
      expect(r.all).toContain(
        "permissions: the bot lacks permissions in 1 of 2 bound channels (#bugs: ADD_REACTIONS, ATTACH_FILES); grant them to the bot's role",
      );
      expect(r.all).not.toContain('discord check: ok');
      // discord.js, from the gateway's cache, computes the same.
      expect(await discordJsMissing(h.ids.bugs)).toEqual(['AddReactions', 'AttachFiles']);
      expect(await discordJsMissing(h.ids.feedback)).toEqual([]);

      // And Discord enforces it: 50013 for the reaction and the file, the plain post goes through.
      const client = await connectClient(h.discord);
      try {
        const channel = client.channels.cache.get(h.ids.bugs) as TextChannel;
        const report = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: 'it breaks' });
        const message = await channel.messages.fetch(report.id);
        const refused = async (p: Promise<unknown>): Promise<unknown> =>
          p.then(
            () => 'posted',
            (e: unknown) => (e instanceof DiscordAPIError ? `${e.status} ${e.code}` : String(e)),
          );
        expect(await refused(message.react('👀'))).toBe('403 50013');
        expect(
          await refused(
            channel.send({ content: 'proof', files: [{ attachment: Buffer.from('x'), name: 'a.png' }] }),
          ),
        ).toBe('403 50013');
        expect(await refused(channel.send('no file'))).toBe('posted');
      } finally {
        await destroyClient(client);
      }
    });

    it("applies overwrites in Discord's order: @everyone's deny, then role overwrites, then the member's own", async () => {
      // Denied for @everyone in the channel: the bot's role grants it guild-wide, but the channel deny wins.
      h.discord.setPermissionOverwrite(h.ids.feedback, {
        roleId: h.discord.guildId,
        deny: ['SEND_MESSAGES'],
      });
      const denied = await check(args());
      expect(denied.code).toBe(2);
      expect(denied.out).toContain(
        `permissions: #feedback (${h.ids.feedback}) missing SEND_MESSAGES; without SEND_MESSAGES Discord also ignores ATTACH_FILES, EMBED_LINKS`,
      );
      expect(await discordJsMissing(h.ids.feedback)).toEqual(['SendMessages']);

      // A role overwrite allowing it wins over @everyone's deny…
      h.discord.setPermissionOverwrite(h.ids.feedback, {
        roleId: h.discord.botRoleId,
        allow: ['SEND_MESSAGES'],
      });
      expect((await check(args())).out).toContain(`permissions: #feedback (${h.ids.feedback}) all 8 present`);
      // …and the member's own overwrite wins over both.
      h.discord.setPermissionOverwrite(h.ids.feedback, {
        userId: h.discord.botId,
        deny: ['SEND_MESSAGES', 'VIEW_CHANNEL'],
      });
      expect(await discordJsMissing(h.ids.feedback)).toEqual(['ViewChannel', 'SendMessages']);
      const hidden = await check(args());
      expect(hidden.code).toBe(2);
      expect(hidden.all).toContain(
        `binding.channels[1].id: channel ${h.ids.feedback} cannot be read (403 50001): the bot lacks VIEW_CHANNEL there (Missing Access)`,
      );

      h.discord.deletePermissionOverwrite(h.ids.feedback, h.discord.botId);
      const clean = await check(args());
      expect(clean.code).toBe(0);
      expect(clean.all).toContain('discord check: ok');
    });
  });

  it('says whether /caseloop is registered, and warns with the fix when the applications.commands scope is missing', async () => {
    const args = ['--binding', bindingPath, '--token-file', h.tokenPath, '--api-url', h.discord.apiUrl];
    const intake = await h.start();
    await eventually(() => intake.runtime.commands?.status(h.discord.guildId) === 'registered', {
      what: 'commands registered',
    });
    await intake.stop();
    const id = h.discord.guildCommands()[0]?.id as string;
    const registered = await check(args);
    expect(registered.code).toBe(0);
    expect(registered.all).toContain(`commands: /caseloop registered in guild ${h.discord.guildId} (${id})`);

    h.discord.setApplicationCommandsScope(false);
    try {
      const missing = await check(args);
      expect(missing.code).toBe(0);
      expect(missing.all).toContain(
        "commands: warning — Discord answered 403 (Missing Access) reading the guild's commands: the bot was invited without the applications.commands scope. Fix: re-invite it with the scopes bot and applications.commands (https://discord.com/oauth2/authorize?",
      );
      expect(missing.all).toContain('discord check: ok');
    } finally {
      h.discord.setApplicationCommandsScope(true);
    }
  });

  it('refuses a bot listed as a user, naming the key', async () => {
    const p = join(h.dir, 'bot-binding.yaml');
    writeFileSync(p, stringify({ ...h.binding, reviewers: [h.ids.rita, h.ids.otherBot] }));
    const r = await check(['--binding', p, '--token-file', h.tokenPath, '--api-url', h.discord.apiUrl]);
    expect(r.code).toBe(2);
    expect(r.all).toContain(`binding.reviewers[1]: user ${h.ids.otherBot} is a bot`);
  });

  it('refuses unknown binding keys and a token file readable by others', async () => {
    const p = join(h.dir, 'typo.yaml');
    writeFileSync(p, stringify({ ...h.binding, reviewrs: [] }));
    expect(
      (await check(['--binding', p, '--token-file', h.tokenPath, '--api-url', h.discord.apiUrl])).all,
    ).toContain('binding.reviewrs: unknown key');
    const loose = join(h.dir, 'loose-token');
    writeFileSync(loose, h.discord.token);
    chmodSync(loose, 0o644);
    const r = await check(['--binding', bindingPath, '--token-file', loose, '--api-url', h.discord.apiUrl]);
    expect(r.code).toBe(2);
    expect(r.all).toContain('mode 0644; it must be 0600');
    expect(r.all).not.toContain(h.discord.token);
  });

  it('reports close code 4014 as the Message Content intent not enabled in the developer portal', async () => {
    const noIntent = await LocalDiscord.start({
      ...intakeSeed(),
      messageContentIntent: false,
      token: h.discord.token,
    });
    try {
      const p = join(h.dir, 'no-intent.yaml');
      const ids = {
        guild: noIntent.guildId,
        bugs: noIntent.channelId('bugs'),
        alice: noIntent.userId('alice'),
        rita: noIntent.userId('rita'),
      };
      writeFileSync(
        p,
        stringify({
          ...h.binding,
          guildId: ids.guild,
          channels: [{ id: ids.bugs, mode: 'open' }],
          reporters: [ids.alice],
          reporterRoles: [],
          reviewers: [ids.rita],
        }),
      );
      const r = await check(['--binding', p, '--token-file', h.tokenPath, '--api-url', noIntent.apiUrl]);
      expect(r.code).toBe(2);
      expect(r.all).toContain(
        'gateway: the Message Content intent is not enabled for this bot in the Discord developer portal',
      );
    } finally {
      await noIntent.close();
    }
  });
});
