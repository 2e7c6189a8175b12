import { loadBindingFile } from '../binding/binding.loader';
import { verifyBindingAgainstDiscord } from '../binding/binding.verifier';
import { readTokenFile } from '../binding/token-file';
import { missingScopeAdvice } from '../commands/command.registrar';
import { CASELOOP_COMMAND } from '../commands/slash-command';
import { DISCORD_PERMISSION_NAME, describeReport, readBotPermissions } from '../discord/bot-permissions';
import { DiscordGateway, GatewayClosedError } from '../discord/discord.gateway';
import { DISCORD_CODES, discordFailure, isDiscordCode } from '../discord/discord.errors';
import { DiscordRest } from '../discord/discord.rest';

export interface DiscordCheckOptions {
  bindingFile: string;
  tokenFile: string;
  apiUrl: string | null;
  readyTimeoutMs: number;
}

/** A check that failed: one line an operator can act on. Never carries the token. */
export class DiscordCheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DiscordCheckError';
  }
}

/**
 * `caseloop discord check`: the binding and token file, the bot, guild and channels over REST,
 * then the gateway up to READY and closed again, then whether `/caseloop` is registered in the
 * guild, then the bot's effective permissions in each bound channel (a missing one fails the
 * check, each named). Reads only; posts nothing.
 */
export async function runDiscordCheck(opts: DiscordCheckOptions, out: (line: string) => void): Promise<void> {
  const step = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      if (e instanceof DiscordCheckError) throw e;
      if (e instanceof GatewayClosedError) throw new DiscordCheckError(`${what}: ${e.message}`);
      const f0 = discordFailure(e);
      const detail = f0.status
        ? `${f0.status}${f0.code ? ` (Discord code ${f0.code})` : ''}: ${f0.message}`
        : (e as Error).message;
      throw new DiscordCheckError(`${what}: ${detail}`);
    }
  };
  const binding = await step('binding', () => loadBindingFile(opts.bindingFile));
  out(
    `binding: ok (${binding.channels.length} channels, ${binding.reporters.length} reporters, ${binding.reporterRoles.length} reporter roles, ${binding.reviewers.length} reviewers)`,
  );
  const token = await step('token file', () => readTokenFile(opts.tokenFile));
  out('token file: ok (regular file, owner-only)');

  const gateway = new DiscordGateway({ token, apiUrl: opts.apiUrl, readyTimeoutMs: opts.readyTimeoutMs });
  try {
    const rest = gateway.rest;
    const me = await step('bot', async () => {
      try {
        return await rest.me();
      } catch (e) {
        if (isDiscordCode(e, DISCORD_CODES.unknownUser)) return null;
        throw e;
      }
    });
    if (me)
      out(`bot: ${me.username} (${me.id})${me.bot ? '' : ' — warning: this token is not a bot account'}`);
    const verified = await step('guild', () => verifyBindingAgainstDiscord(binding, rest));
    out(`guild: ${verified.guild.name} (${verified.guild.id})`);
    for (const c of verified.channels) out(`channel: #${c.name ?? '?'} (${c.id}) mode ${c.mode}`);
    out(`listed users: ${verified.users}, none of them a bot`);
    const started = Date.now();
    const { selfId } = await step('gateway', () => gateway.connect());
    // A stand-in that refused /users/@me still proves the bot's identity here.
    if (!me) out(`bot: ${(await step('bot', () => rest.user(selfId))).username} (${selfId}) (read by id)`);
    out(
      `gateway: READY in ${Date.now() - started} ms with the Message Content intent; closed, nothing posted`,
    );
    out(await commandsLine(rest, gateway.client.application?.id ?? selfId, binding.guildId));
    const reports = await step('permissions', () =>
      readBotPermissions(
        rest,
        binding.guildId,
        me?.id ?? selfId,
        verified.channels.map((c) => c.id),
      ),
    );
    for (const r of reports) out(describeReport(r));
    const lacking = reports.filter((r) => r.missing.length > 0);
    if (lacking.length > 0)
      throw new DiscordCheckError(
        `permissions: the bot lacks permissions in ${lacking.length} of ${reports.length} bound channels (${lacking
          .map(
            (r) =>
              `#${r.name ?? r.channelId}: ${r.missing.map((m) => DISCORD_PERMISSION_NAME[m]).join(', ')}`,
          )
          .join('; ')}); grant them to the bot's role or change the channel's permission overwrites`,
      );
  } finally {
    await gateway.destroy();
  }
}

/**
 * Whether `/caseloop` is registered in the guild (a GET; intake registers it at start). Only a
 * warning when it is not: plain-text reviewer commands work without it.
 */
async function commandsLine(rest: DiscordRest, applicationId: string, guildId: string): Promise<string> {
  const name = `/${CASELOOP_COMMAND.name}`;
  let registered;
  try {
    registered = await rest.guildCommands(applicationId, guildId);
  } catch (e) {
    const f = discordFailure(e);
    if (f.status === 403)
      return `commands: warning — Discord answered 403 (${f.message}) reading the guild's commands: ${missingScopeAdvice(applicationId, guildId)}`;
    return `commands: warning — could not read the guild's commands (${f.status || f.message})`;
  }
  const found = registered.find((c) => c.name === CASELOOP_COMMAND.name);
  return found
    ? `commands: ${name} registered in guild ${guildId} (${found.id})`
    : `commands: ${name} not registered in guild ${guildId} yet (intake registers it at start unless INTAKE_REGISTER_COMMANDS=false)`;
}
