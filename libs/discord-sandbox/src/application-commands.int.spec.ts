import {
  ApplicationCommandOptionType,
  DiscordAPIError,
  Events,
  Routes,
  type ApplicationCommandData,
  type ChatInputCommandInteraction,
  type Interaction,
} from 'discord.js';
import { connectClient, destroyClient } from './discord-client.fixture';
import { LocalDiscord, type SandboxCommands, type SandboxState } from './local-discord';
import { defaultSeed } from './seed';

jest.setTimeout(60_000);

const caseloop: ApplicationCommandData = {
  name: 'caseloop',
  description: 'Reviewer commands in a case thread',
  options: [
    { type: ApplicationCommandOptionType.Subcommand, name: 'approve', description: 'Approve the case' },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'reject',
      description: 'Reject the case',
      options: [
        { type: ApplicationCommandOptionType.String, name: 'reason', description: 'Why', required: true },
      ],
    },
  ],
};

describe('application commands on the local Discord, through discord.js', () => {
  let discord: LocalDiscord;
  let client: Awaited<ReturnType<typeof connectClient>>;
  const control = async <T>(
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
  const refusal = async (p: Promise<unknown>): Promise<DiscordAPIError> => {
    const e = await p.then(
      () => null,
      (error: unknown) => error,
    );
    if (!(e instanceof DiscordAPIError)) throw new Error(`expected a DiscordAPIError, got ${String(e)}`);
    return e;
  };

  beforeAll(async () => {
    discord = await LocalDiscord.start(defaultSeed());
    client = await connectClient(discord);
  });

  afterAll(async () => {
    await destroyClient(client);
    await discord?.close();
  });

  it('bulk-overwrites guild commands and reads them back; a second overwrite keeps the id', async () => {
    expect(client.application.id).toBe(discord.applicationId);
    const set = await client.application.commands.set([caseloop], discord.guildId);
    const registered = set.first();
    expect(registered).toMatchObject({
      name: 'caseloop',
      description: 'Reviewer commands in a case thread',
      guildId: discord.guildId,
      applicationId: discord.applicationId,
    });
    expect(registered?.id).toMatch(/^\d{17,20}$/);

    const fetched = await client.application.commands.fetch({ guildId: discord.guildId, force: true });
    expect(fetched.map((c) => c.name)).toEqual(['caseloop']);
    expect(fetched.first()?.options.map((o) => o.name)).toEqual(['approve', 'reject']);

    const again = await client.application.commands.set([caseloop], discord.guildId);
    expect(again.map((c) => [c.id, c.version])).toEqual([[registered?.id, registered?.version]]);
    expect(discord.guildCommands().map((c) => c.id)).toEqual([registered?.id]);

    const { body } = await control<SandboxCommands>('GET', '/sandbox/commands');
    expect(body.guilds[discord.guildId]).toEqual([
      expect.objectContaining({ id: registered?.id, type: 1, name: 'caseloop', guild_id: discord.guildId }),
    ]);
    expect(body.global).toEqual([]);
    expect(discord.state().commands.guilds[discord.guildId]?.map((c) => c.name)).toEqual(['caseloop']);
  });

  it("refuses an upper-case name and a 101-character description with Discord's 400 Invalid Form Body", async () => {
    const e = await refusal(
      client.application.commands.set(
        [caseloop, { name: 'CaseLoop', description: 'x'.repeat(101) }],
        discord.guildId,
      ),
    );
    expect(e.status).toBe(400);
    expect(e.code).toBe(50035);
    expect(e.rawError).toMatchObject({
      errors: {
        '1': {
          name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] },
          description: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] },
        },
      },
    });
    expect(discord.guildCommands().map((c) => c.name)).toEqual(['caseloop']);
  });

  it('answers 403 Missing Access while the guild lacks the applications.commands scope (control API)', async () => {
    const off = await control<SandboxState['application']>('POST', '/sandbox/application', {
      applicationCommandsScope: false,
    });
    expect(off.status).toBe(200);
    expect(off.body.applicationCommandsScope[discord.guildId]).toBe(false);
    try {
      for (const p of [
        client.application.commands.set([caseloop], discord.guildId),
        client.application.commands.fetch({ guildId: discord.guildId, force: true }),
      ]) {
        const e = await refusal(p);
        expect([e.status, e.code, e.message]).toEqual([403, 50001, 'Missing Access']);
      }
    } finally {
      await control('POST', '/sandbox/application', { applicationCommandsScope: true });
    }
    expect(discord.state().application.applicationCommandsScope[discord.guildId]).toBe(true);
    await expect(client.application.commands.set([caseloop], discord.guildId)).resolves.toHaveProperty(
      'size',
      1,
    );
  });

  it('manages global commands too, and no other application', async () => {
    const global = await client.application.commands.set([
      { name: 'ping', description: 'Is the bot there?' },
    ]);
    expect(global.map((c) => [c.name, c.guildId])).toEqual([['ping', null]]);
    expect((await client.application.commands.fetch({ force: true })).map((c) => c.name)).toEqual(['ping']);
    expect(discord.commands().global.map((c) => c.name)).toEqual(['ping']);
    const e = await refusal(
      client.rest.put(Routes.applicationGuildCommands('1000000000000000001', discord.guildId), { body: [] }),
    );
    expect([e.status, e.code]).toEqual([403, 20012]);
  });

  it('invokes a registered command under its registered id', async () => {
    const id = discord.guildCommands().find((c) => c.name === 'caseloop')?.id;
    const received = new Promise<ChatInputCommandInteraction>((resolve) => {
      const on = (i: Interaction): void => {
        if (!i.isChatInputCommand()) return;
        client.off(Events.InteractionCreate, on);
        resolve(i);
      };
      client.on(Events.InteractionCreate, on);
    });
    discord.slash({
      authorId: discord.userId('rita'),
      channelId: discord.channelId('bugs'),
      name: 'caseloop',
      subcommand: 'reject',
      options: { reason: 'works as designed' },
    });
    const i = await received;
    expect([i.commandId, i.commandGuildId, i.commandName]).toEqual([id, discord.guildId, 'caseloop']);
    expect(i.options.getSubcommand()).toBe('reject');
    expect(i.options.getString('reason')).toBe('works as designed');
  });
});
