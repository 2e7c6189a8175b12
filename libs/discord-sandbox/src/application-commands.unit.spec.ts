import { ApplicationCommands, renderCommand } from './application-commands';
import { DiscordApiError } from './errors';
import { SnowflakeMint } from './snowflake';

const GUILD = '1461329068032159744';
const APP = '1461329068032159750';

const caseloop = {
  name: 'caseloop',
  description: 'Reviewer commands for a case thread',
  options: [
    { type: 1, name: 'approve', description: 'Approve the case' },
    {
      type: 1,
      name: 'reject',
      description: 'Reject the case',
      options: [{ type: 3, name: 'reason', description: 'Why', required: true }],
    },
  ],
};

const refusal = (f: () => unknown): DiscordApiError => {
  try {
    f();
  } catch (e) {
    if (e instanceof DiscordApiError) return e;
    throw e;
  }
  throw new Error('expected a Discord error');
};

describe('application commands (bulk overwrite)', () => {
  let t = 1_700_000_000_000;
  const commands = () => new ApplicationCommands(APP, new SnowflakeMint(() => (t += 1)));

  it('stores the list and renders Discord-shaped command objects', () => {
    const store = commands();
    const [c] = store.overwrite(GUILD, [caseloop]);
    expect(renderCommand(c!)).toEqual({
      id: expect.stringMatching(/^\d{17,20}$/),
      application_id: APP,
      version: expect.stringMatching(/^\d{17,20}$/),
      default_member_permissions: null,
      type: 1,
      name: 'caseloop',
      description: 'Reviewer commands for a case thread',
      guild_id: GUILD,
      options: caseloop.options,
      nsfw: false,
      integration_types: [0],
      contexts: null,
    });
    expect(store.read(GUILD).map((x) => x.name)).toEqual(['caseloop']);
    expect(store.read(null)).toEqual([]);
  });

  it('keeps the id of a command that keeps its name; the version moves only when it changed', () => {
    const store = commands();
    const [first] = store.overwrite(GUILD, [caseloop]);
    const [same] = store.overwrite(GUILD, [caseloop]);
    expect(same).toMatchObject({ id: first!.id, version: first!.version });
    const [changed] = store.overwrite(GUILD, [{ ...caseloop, description: 'Reviewer commands' }]);
    expect(changed!.id).toBe(first!.id);
    expect(changed!.version).not.toBe(first!.version);
    expect(store.overwrite(GUILD, [])).toEqual([]);
    expect(store.read(GUILD)).toEqual([]);
  });

  it("refuses invalid names and descriptions with Discord's 50035 shape, keyed by index", () => {
    const store = commands();
    const e = refusal(() =>
      store.overwrite(GUILD, [
        caseloop,
        { name: 'CaseLoop', description: 'x' },
        { name: 'a'.repeat(33), description: '' },
        { name: 'has space', description: 'd'.repeat(101) },
      ]),
    );
    expect(e.status).toBe(400);
    expect(e.body()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        '1': {
          name: {
            _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME', message: 'Command name is invalid' }],
          },
        },
        '2': {
          name: {
            _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 32 in length.' }],
          },
          description: {
            _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 100 in length.' }],
          },
        },
        '3': {
          name: {
            _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME', message: 'Command name is invalid' }],
          },
          description: {
            _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 100 in length.' }],
          },
        },
      },
    });
    // Nothing of a refused list is stored.
    expect(store.read(GUILD)).toEqual([]);
  });

  it('accepts letters of any script, digits, - and _ (lowercase); checks options down the tree', () => {
    const store = commands();
    expect(store.overwrite(GUILD, [{ name: 'größe_2-x', description: 'ok' }])).toHaveLength(1);
    const e = refusal(() =>
      store.overwrite(GUILD, [
        {
          ...caseloop,
          options: [
            caseloop.options[0],
            {
              type: 1,
              name: 'reject',
              description: 'Reject the case',
              options: [
                { type: 3, name: 'Reason', description: 'Why', required: true },
                { type: 3, name: 'note', description: '' },
              ],
            },
          ],
        },
      ]),
    );
    expect(e.body().errors).toEqual({
      '0': {
        options: {
          '1': {
            options: {
              '0': {
                name: {
                  _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME', message: 'Command name is invalid' }],
                },
              },
              '1': {
                description: {
                  _errors: [
                    { code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 100 in length.' },
                  ],
                },
              },
            },
          },
        },
      },
    });
  });

  it('refuses two commands of one name, and subcommands mixed with plain options', () => {
    const store = commands();
    expect(refusal(() => store.overwrite(GUILD, [caseloop, caseloop])).body().errors).toEqual({
      '1': {
        name: {
          _errors: [
            {
              code: 'APPLICATION_COMMANDS_DUPLICATE_NAME',
              message: 'Application command names must be unique',
            },
          ],
        },
      },
    });
    const mixed = refusal(() =>
      store.overwrite(GUILD, [
        { ...caseloop, options: [...caseloop.options, { type: 3, name: 'text', description: 'free text' }] },
      ]),
    );
    expect(JSON.stringify(mixed.body().errors)).toContain('APPLICATION_COMMAND_OPTIONS_TYPE_INVALID');
  });

  it('answers 403 Missing Access in a guild without the applications.commands scope; global commands still work', () => {
    const store = commands();
    store.setScope(GUILD, false);
    for (const f of [() => store.overwrite(GUILD, [caseloop]), () => store.read(GUILD)]) {
      expect(refusal(f).body()).toEqual({ code: 50001, message: 'Missing Access' });
      expect(refusal(f).status).toBe(403);
    }
    expect(store.overwrite(null, [caseloop]).map((c) => c.guildId)).toEqual([null]);
    expect(store.find(GUILD, 'caseloop')?.guildId).toBeNull();
    store.setScope(GUILD, true);
    const [guildOne] = store.overwrite(GUILD, [caseloop]);
    expect(store.find(GUILD, 'caseloop')?.id).toBe(guildOne!.id);
  });
});
