import { eventually } from '@caseloop/testing';
import { REST, Routes } from 'discord.js';
import { IntakeHarness } from '../../test/intake.fixture';
import { DiscordRest } from '../discord/discord.rest';
import { CommandRegistrar } from './command.registrar';
import { CASELOOP_COMMAND } from './slash-command';

jest.setTimeout(90_000);

interface CommandObject {
  id: string;
  application_id: string;
  guild_id?: string;
  version: string;
  type: number;
  name: string;
  description: string;
  options?: { name: string; options?: { name: string; required?: boolean }[] }[];
}

describe('intake registers /caseloop in the bound guild', () => {
  let h: IntakeHarness;
  let rest: REST;

  beforeAll(async () => {
    h = await IntakeHarness.create();
    // An independent discord.js REST client: what any other holder of the token would read.
    rest = new REST({ api: h.discord.apiUrl }).setToken(h.discord.token);
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const guildCommands = async (): Promise<CommandObject[]> =>
    (await rest.get(
      Routes.applicationGuildCommands(h.discord.applicationId, h.discord.guildId),
    )) as CommandObject[];
  const puts = () =>
    h.discord.requests.filter(
      (r) => r.method === 'PUT' && r.route === '/applications/:application/guilds/:guild/commands',
    );
  const logged = (pattern: RegExp) =>
    h.logLines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => pattern.test(l.msg));
  const gauge = async (registry: { getSingleMetricAsString(n: string): Promise<string> }) =>
    registry.getSingleMetricAsString('caseloop_intake_commands_registered');

  it('registers the command at start, as the handler reads it; a restart overwrites it without a duplicate', async () => {
    const first = await h.start();
    await eventually(() => first.runtime.commands?.status(h.discord.guildId) === 'registered', {
      what: 'commands registered',
    });
    const [registered, ...more] = await guildCommands();
    expect(more).toEqual([]);
    expect(registered).toMatchObject({
      application_id: h.discord.applicationId,
      guild_id: h.discord.guildId,
      type: 1,
      name: 'caseloop',
      description: CASELOOP_COMMAND.description,
    });
    expect(registered?.id).toMatch(/^\d{17,20}$/);
    expect(
      registered?.options?.map((o) => [o.name, (o.options ?? []).map((x) => [x.name, x.required ?? false])]),
    ).toEqual([
      ['approve', []],
      ['revise', [['text', true]]],
      ['reject', [['reason', true]]],
      ['actionable', [['note', false]]],
      ['same', [['review', true]]],
      ['different', [['review', true]]],
      ['privacy-ok', [['sha256', true]]],
    ]);
    expect(logged(/^application commands registered in guild \d+: \/caseloop$/)).toHaveLength(1);
    expect(await gauge(first.registry)).toContain(
      `caseloop_intake_commands_registered{guild="${h.discord.guildId}"} 1`,
    );
    await first.stop();

    const second = await h.start();
    await eventually(() => second.runtime.commands?.status(h.discord.guildId) === 'registered', {
      what: 'commands registered again',
    });
    expect(puts()).toHaveLength(2);
    expect(await guildCommands()).toEqual([registered]);
    // A slash command a reviewer runs now arrives under the registered id, and intake answers it.
    const i = h.discord.slash({
      authorId: h.ids.rita,
      channelId: h.ids.bugs,
      name: 'caseloop',
      subcommand: 'approve',
    });
    await eventually(() => h.discord.interactionLog().find((x) => x.id === i.id)?.reply ?? null, {
      what: 'slash answer',
    });
    expect(h.discord.interactionLog().find((x) => x.id === i.id)?.reply?.content).toBe(
      'Use /caseloop inside a case thread.',
    );
    await second.stop();
  });

  it('logs a 403 with the fix (re-invite with applications.commands), keeps working, and registers once the scope is granted', async () => {
    h.discord.setApplicationCommandsScope(false);
    const before = h.logLines.length;
    const intake = await h.start({ commandRetry: { retryBaseMs: 100, retryMaxMs: 400 } });
    try {
      const refusals = await eventually(
        () => {
          const lines = h.logLines
            .slice(before)
            .map((l) => JSON.parse(l) as { level: number; msg: string; status?: number; code?: number })
            .filter((l) => l.status === 403);
          return lines.length >= 2 ? lines : null;
        },
        { what: 'two refused attempts' },
      );
      const line = refusals?.[0];
      expect(line).toMatchObject({ level: 50, code: 50001 });
      expect(line?.msg).toContain(
        `Discord refused to register /caseloop in guild ${h.discord.guildId} (403 Missing Access)`,
      );
      expect(line?.msg).toContain('invited without the applications.commands scope');
      expect(line?.msg).toContain('re-invite it with the scopes bot and applications.commands');
      expect(line?.msg).toContain(
        `https://discord.com/oauth2/authorize?client_id=${h.discord.applicationId}&scope=bot+applications.commands`,
      );
      expect(line?.msg).not.toContain(h.discord.token);
      expect(intake.runtime.commands?.status(h.discord.guildId)).toBe('pending');
      expect(await gauge(intake.registry)).toContain(`{guild="${h.discord.guildId}"} 0`);

      // Intake goes on: a report is recorded and receipted while the command cannot be registered.
      const m = h.discord.say({
        authorId: h.ids.alice,
        channelId: h.ids.bugs,
        content: 'export fails on Safari',
      });
      await eventually(async () => (await h.sourceEvents(m.id)).length === 2, {
        what: 'receipt',
        timeoutMs: 20_000,
      });
      expect((await h.sourceEvents(m.id)).map((e) => e.type)).toEqual(['SourceReceived', 'ReadReceiptAdded']);

      // The operator re-invites the bot with the scope: the next attempt registers, no restart needed.
      h.discord.setApplicationCommandsScope(true);
      await eventually(() => intake.runtime.commands?.status(h.discord.guildId) === 'registered', {
        what: 'registered after the scope was granted',
      });
      expect((await guildCommands()).map((c) => c.name)).toEqual(['caseloop']);
      expect(await gauge(intake.registry)).toContain(`{guild="${h.discord.guildId}"} 1`);
    } finally {
      await intake.stop();
    }
  });

  it('retries after Discord fails with 5xx, and gives up at once on definitions Discord refuses (400)', async () => {
    const path = `/applications/${h.discord.applicationId}/guilds/${h.discord.guildId}/commands`;
    // discord.js retries a 5xx three times itself: five failures make the registrar's first attempt fail.
    const fault = h.discord.inject({ method: 'PUT', path, status: 503, times: 5 });
    const before = h.logLines.length;
    const intake = await h.start({ commandRetry: { retryBaseMs: 50, retryMaxMs: 100 } });
    try {
      await eventually(() => intake.runtime.commands?.status(h.discord.guildId) === 'registered', {
        what: 'registered after 503s',
      });
      expect(fault.fired).toBe(5);
      const retried = h.logLines
        .slice(before)
        .map((l) => JSON.parse(l) as { level: number; msg: string; status?: number })
        .filter((l) => l.status === 503);
      expect(retried[0]).toMatchObject({ level: 40 });
      expect(retried[0]?.msg).toMatch(
        /^application commands not registered in guild \d+ yet \(503\); retrying in 50 ms$/,
      );

      const lines: { msg: string; status?: number }[] = [];
      const log = {
        info: () => undefined,
        debug: () => undefined,
        warn: (o: object, msg?: string) => void lines.push({ ...o, msg: msg ?? '' }),
        error: (o: object, msg?: string) => void lines.push({ ...o, msg: msg ?? '' }),
      };
      const putsBefore = puts().length;
      const invalid = new CommandRegistrar(
        new DiscordRest(rest),
        h.discord.applicationId,
        [h.discord.guildId],
        [{ ...CASELOOP_COMMAND, name: 'CaseLoop' }],
        log,
        { retryBaseMs: 10, retryMaxMs: 10 },
      );
      invalid.start();
      await invalid.settled();
      expect(invalid.status(h.discord.guildId)).toBe('refused');
      expect(puts().length - putsBefore).toBe(1);
      expect(lines).toEqual([expect.objectContaining({ status: 400, code: 50035 })]);
      expect(lines[0]?.msg).toContain('APPLICATION_COMMAND_INVALID_NAME');
      expect(lines[0]?.msg).toContain('not retried');
      // What was registered before is untouched.
      expect((await guildCommands()).map((c) => c.name)).toEqual(['caseloop']);
    } finally {
      await intake.stop();
    }
  });

  it('registers nothing when turned off (INTAKE_REGISTER_COMMANDS=false)', async () => {
    const before = puts().length;
    const intake = await h.start({ registerCommands: false });
    try {
      expect(intake.runtime.commands).toBeNull();
      const m = h.discord.say({
        authorId: h.ids.alice,
        channelId: h.ids.bugs,
        content: 'search ignores accents',
      });
      await eventually(async () => (await h.sourceEvents(m.id)).length === 2, {
        what: 'receipt',
        timeoutMs: 20_000,
      });
      expect(puts()).toHaveLength(before);
    } finally {
      await intake.stop();
    }
  });
});
