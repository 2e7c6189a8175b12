import { Client, Events, GatewayIntentBits, type ClientOptions } from 'discord.js';
import type { LocalDiscord } from './local-discord';

/**
 * An unmodified discord.js client pointed at a LocalDiscord: only `rest.api` changes. Re-IDENTIFY
 * would otherwise wait ~5 s on the default identify throttler, so tests pass a no-op one.
 */
export async function connectClient(
  discord: LocalDiscord,
  overrides: Partial<ClientOptions> = {},
): Promise<Client<true>> {
  const client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.GuildMessageReactions,
      GatewayIntentBits.MessageContent,
    ],
    ...overrides,
    rest: { ...overrides.rest, api: discord.apiUrl },
    ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }), ...overrides.ws },
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(discord.token);
  await ready;
  return client as Client<true>;
}

/** `destroy()` can hang if the shard is mid-handshake; never let teardown block a suite. */
export async function destroyClient(client: Client | undefined): Promise<void> {
  if (!client) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.destroy().catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, 5000))),
  ]);
  clearTimeout(timer);
}
