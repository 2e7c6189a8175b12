export { LocalDiscord } from './local-discord';
export { connectClient, destroyClient } from './discord-client.fixture';
export type {
  LocalDiscordOptions,
  SayInput,
  WebhookPostInput,
  SandboxMessage,
  SandboxState,
  SandboxCommands,
  SandboxUser,
} from './local-discord';
export type { FaultRule, InjectedFault, RateLimitSettings } from './faults';
export type { RestRequestRecord } from './rest';
export type { GatewayOpRecord } from './gateway';
export { GatewayClose, GatewayOp } from './gateway';
export type { InteractionRecord, SlashCommandInput } from './interactions';
export { defaultSeed, localDiscordSeedSchema } from './seed';
export type { LocalDiscordSeed, Persona, ChannelMode } from './seed';
export { Intents } from './world';
export { Permission, ALL_PERMISSIONS, computePermissions } from './permissions';
export type { PermissionName, PermissionOverwrite } from './permissions';
export type { WorldEvent } from './world';
export { DISCORD_EPOCH, SnowflakeMint, snowflakeTime, compareSnowflakes } from './snowflake';
export type { OAuth2Routes, OAuth2Request } from './oauth2';
