import { discordFailure } from '../discord/discord.errors';
import { DiscordRest } from '../discord/discord.rest';
import { Binding, BindingError, listedUsers } from './binding.schema';

export interface VerifiedBinding {
  guild: { id: string; name: string };
  channels: { id: string; name: string | null; mode: string }[];
  users: number;
}

/**
 * Checks the binding against the guild over REST: the guild is reachable, every bound channel is
 * in it, and no listed user is a bot (a bot's messages are never reports; listing one is a mistake).
 */
export async function verifyBindingAgainstDiscord(
  binding: Binding,
  rest: DiscordRest,
): Promise<VerifiedBinding> {
  let guild: { id: string; name: string };
  try {
    guild = await rest.guild(binding.guildId);
  } catch (e) {
    const f = discordFailure(e);
    throw new BindingError(
      'binding_unknown_channel',
      `binding.guildId: the bot cannot read guild ${binding.guildId} (${f.status} ${f.code ?? ''})`.trim(),
      ['binding.guildId'],
    );
  }
  const channels: VerifiedBinding['channels'] = [];
  for (const [i, c] of binding.channels.entries()) {
    const key = `binding.channels[${i}].id`;
    let ch;
    try {
      ch = await rest.channel(c.id);
    } catch (e) {
      const f = discordFailure(e);
      const why = f.code === 50001 ? ': the bot lacks VIEW_CHANNEL there (Missing Access)' : '';
      throw new BindingError(
        'binding_unknown_channel',
        `${key}: channel ${c.id} cannot be read (${f.status} ${f.code ?? ''})`.trim() + why,
        [key],
      );
    }
    if (ch.guild_id !== binding.guildId)
      throw new BindingError(
        'binding_unknown_channel',
        `${key}: channel ${c.id} is not in guild ${binding.guildId}`,
        [key],
      );
    channels.push({ id: c.id, name: ch.name ?? null, mode: c.mode });
  }
  const users = listedUsers(binding);
  for (const u of users) {
    let user;
    try {
      user = await rest.user(u.id);
    } catch (e) {
      const f = discordFailure(e);
      throw new BindingError(
        'binding_invalid',
        `${u.key}: user ${u.id} cannot be read (${f.status} ${f.code ?? ''})`.trim(),
        [u.key],
      );
    }
    if (user.bot)
      throw new BindingError(
        'binding_lists_bot',
        `${u.key}: user ${u.id} is a bot; bots cannot report or review`,
        [u.key],
      );
  }
  return { guild, channels, users: users.length };
}
