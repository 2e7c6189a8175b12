import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '@caseloop/cli';
import { registerDiscordCommands } from './discord.commands';
import { LocalDiscord } from '@caseloop/discord-sandbox';
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
    expect(r.all).toContain('discord check: ok');
    expect(r.all).not.toContain(h.discord.token);
    expect(h.discord.requests.filter((q) => q.method !== 'GET')).toEqual([]);
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
