import { PermissionFlagsBits, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { NEEDED_PERMISSIONS } from '../discord/bot-permissions';
import { discordFailure } from '../discord/discord.errors';
import { DiscordRest, RegisteredCommand } from '../discord/discord.rest';
import { IntakeLog } from '../ops/intake.metrics';

/** What intake needs in a guild: the permissions `caseloop discord check` looks for in each bound channel. */
const BOT_PERMISSIONS = NEEDED_PERMISSIONS.reduce((acc, name) => acc | PermissionFlagsBits[name], 0n);

/** The OAuth2 URL that (re-)invites the bot with both scopes intake needs and the permissions it uses. */
export const inviteUrl = (applicationId: string, guildId: string): string =>
  `https://discord.com/oauth2/authorize?client_id=${applicationId}&scope=bot+applications.commands` +
  `&permissions=${BOT_PERMISSIONS}&guild_id=${guildId}&disable_guild_select=true`;

/** What a 403 on the guild's command routes means, and the fix, in one sentence an operator can follow. */
export const missingScopeAdvice = (applicationId: string, guildId: string): string =>
  'the bot was invited without the applications.commands scope. Fix: re-invite it with the scopes bot and ' +
  `applications.commands (${inviteUrl(applicationId, guildId)})`;

const inWords = (ms: number): string => (ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 1_000)} s`);

export type RegistrationStatus = 'pending' | 'registered' | 'refused' | 'stopped';

export interface CommandRegistrarOptions {
  /** First retry delay; doubled per failure up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
}

/**
 * Registers intake's application commands in each bound guild with a bulk overwrite (idempotent:
 * a restart changes nothing on Discord). Runs beside intake, never in its way: a failure is logged
 * in words an operator can act on and retried with backoff; only a 400 (a defect in the
 * definitions, which no retry fixes) stops the attempts.
 */
export class CommandRegistrar {
  readonly #status = new Map<string, RegistrationStatus>();
  readonly #registered = new Map<string, RegisteredCommand[]>();
  readonly #running = new Set<Promise<void>>();
  readonly #timers = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  #stopped = false;

  constructor(
    private readonly rest: DiscordRest,
    private readonly applicationId: string,
    private readonly guildIds: readonly string[],
    private readonly commands: readonly RESTPostAPIChatInputApplicationCommandsJSONBody[],
    private readonly log: IntakeLog,
    private readonly opts: CommandRegistrarOptions,
    private readonly onStatus: (guildId: string, status: RegistrationStatus) => void = () => undefined,
  ) {}

  /** Starts one registration loop per guild and returns at once. */
  start(): void {
    for (const guildId of this.guildIds) {
      this.#set(guildId, 'pending');
      const run = this.#register(guildId).finally(() => this.#running.delete(run));
      this.#running.add(run);
    }
  }

  status(guildId: string): RegistrationStatus | undefined {
    return this.#status.get(guildId);
  }

  /** What Discord answered to the last successful overwrite in this guild. */
  registered(guildId: string): RegisteredCommand[] {
    return this.#registered.get(guildId) ?? [];
  }

  /** Settles when every guild is registered, refused or stopped (tests wait on it). */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  /** Cancels the waits between attempts; an attempt in flight is given `graceMs` to finish. */
  async stop(graceMs = 5_000): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers) {
      clearTimeout(t.timer);
      t.wake();
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.settled(),
      new Promise<void>((r) => {
        timer = setTimeout(r, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  async #register(guildId: string): Promise<void> {
    const names = this.commands.map((c) => `/${c.name}`);
    for (let attempt = 1; !this.#stopped; attempt++) {
      try {
        const registered = await this.rest.overwriteGuildCommands(this.applicationId, guildId, this.commands);
        this.#registered.set(guildId, registered);
        this.#set(guildId, 'registered');
        this.log.info(
          { guildId, commands: registered.map((c) => ({ name: c.name, id: c.id, version: c.version })) },
          `application commands registered in guild ${guildId}: ${names.join(', ')}`,
        );
        return;
      } catch (e) {
        const f = discordFailure(e);
        const retryInMs = Math.min(
          this.opts.retryMaxMs,
          this.opts.retryBaseMs * 2 ** Math.min(attempt - 1, 30),
        );
        const detail = { guildId, status: f.status, code: f.code, attempt };
        if (f.status === 400) {
          this.#set(guildId, 'refused');
          this.log.error(
            { ...detail, discord: f.message },
            `Discord refused intake's command definitions in guild ${guildId} (400): ${f.message}; not retried`,
          );
          return;
        }
        if (f.status === 403) {
          this.log.error(
            { ...detail, retryInMs },
            `Discord refused to register ${names.join(', ')} in guild ${guildId} (403 ${f.message}): ` +
              `${missingScopeAdvice(this.applicationId, guildId)}; intake keeps running without the slash ` +
              `command and retries in ${inWords(retryInMs)}`,
          );
        } else {
          this.log.warn(
            { ...detail, retryInMs, err: f.message },
            `application commands not registered in guild ${guildId} yet (${f.status || f.message}); retrying in ${inWords(retryInMs)}`,
          );
        }
        await this.#sleep(retryInMs);
      }
    }
    this.#set(guildId, 'stopped');
  }

  #set(guildId: string, status: RegistrationStatus): void {
    this.#status.set(guildId, status);
    this.onStatus(guildId, status);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        wake: () => {
          this.#timers.delete(entry);
          resolve();
        },
        timer: setTimeout(() => entry.wake(), ms),
      };
      this.#timers.add(entry);
    });
  }
}
