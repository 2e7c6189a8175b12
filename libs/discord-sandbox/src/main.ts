import { chmodSync, existsSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { LocalDiscord, type LocalDiscordOptions } from './local-discord';
import { defaultSeed, localDiscordSeedSchema } from './seed';

/**
 * Starts a local Discord from a seed file (YAML or JSON) or the default cast and prints its URLs.
 * The bot token is written to a 0600 file (created if missing) instead of being printed.
 */
const serverOptionsSchema = z.strictObject({
  messageContentIntent: z.boolean().optional(),
  guildMembersIntent: z.boolean().optional(),
  presenceIntent: z.boolean().optional(),
  dedupeWindowMs: z.number().int().positive().optional(),
  heartbeatIntervalMs: z.number().int().positive().optional(),
  resumeWindowMs: z.number().int().positive().optional(),
  rateLimit: z
    .strictObject({ limit: z.number().int().positive(), windowMs: z.number().int().positive() })
    .optional(),
});

const seedFileSchema = localDiscordSeedSchema.extend({ options: serverOptionsSchema.optional() });

function loadSeed(path: string | undefined): LocalDiscordOptions {
  if (!path) return defaultSeed();
  const text = readFileSync(path, 'utf8');
  const raw: unknown = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  const result = seedFileSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues
      .map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('\n');
    throw new Error(`seed ${path} is invalid:\n${problems}`);
  }
  const { options, ...seed } = result.data;
  return { ...seed, ...options };
}

function tokenFrom(path: string): string {
  if (existsSync(path)) {
    const stat = lstatSync(path);
    if (!stat.isFile() || stat.isSymbolicLink()) throw new Error(`token file ${path} must be a regular file`);
    if ((stat.mode & 0o077) !== 0)
      throw new Error(`token file ${path} must not be readable by group or others (chmod 600)`);
    const token = readFileSync(path, 'utf8').trim();
    if (!token) throw new Error(`token file ${path} is empty`);
    return token;
  }
  const token = `${Buffer.from(String(Date.now())).toString('base64url')}.${randomBytes(24).toString('base64url')}`;
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return token;
}

async function main(): Promise<void> {
  const program = new Command()
    .name('local-discord')
    .description('A local Discord (REST v10, Gateway v10, web chat page) for the caseloop sandbox and tests')
    .option('--seed <file>', 'seed file (YAML or JSON); default: the built-in cast')
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'listen port (0 = any free port)', '0')
    .option('--token-file <file>', 'bot token file (created 0600 with a fresh token if missing)')
    .option('--state-out <file>', 'write the ids and URLs as JSON to this file once listening')
    .option('--print-seed', 'print the default seed as YAML and exit')
    .parse();
  const opts = program.opts<{
    seed?: string;
    host: string;
    port: string;
    tokenFile?: string;
    stateOut?: string;
    printSeed?: boolean;
  }>();
  if (opts.printSeed) {
    process.stdout.write(stringifyYaml(defaultSeed()));
    return;
  }
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error('--port must be an integer between 0 and 65535');
  const options = loadSeed(opts.seed);
  const discord = await LocalDiscord.start({
    ...options,
    host: opts.host,
    port,
    ...(opts.tokenFile ? { token: tokenFrom(opts.tokenFile) } : {}),
  });
  const state = discord.state();
  const summary = {
    urls: state.urls,
    tokenFile: opts.tokenFile ?? null,
    guild: state.guild,
    bot: { id: state.bot.id, username: state.bot.username },
    channels: state.channels.map((c) => ({ id: c.id, name: c.name, mode: c.mode })),
    roles: state.roles,
    users: state.users.map((u) => ({
      id: u.id,
      username: u.username,
      persona: u.persona,
      bot: u.bot,
      roleIds: u.roleIds,
    })),
  };
  if (opts.stateOut) writeFileSync(opts.stateOut, `${JSON.stringify(summary, null, 2)}\n`);
  const lines = [
    `local Discord for ${state.guild.name} is listening`,
    `  web chat     ${state.urls.sandboxUrl}`,
    `  REST         ${state.urls.apiUrl}   (discord.js: rest.api)`,
    `  gateway      ${state.urls.gatewayUrl}`,
    `  control API  ${state.urls.url}/sandbox/state`,
    `  token        ${opts.tokenFile ? `in ${opts.tokenFile}` : 'random (pass --token-file to share it)'}`,
    ...summary.channels.map((c) => `  #${c.name.padEnd(12)} ${c.id}${c.mode ? ` (${c.mode})` : ''}`),
    ...summary.users.map((u) => `  @${u.username.padEnd(12)} ${u.id} (${u.persona})`),
    `  @${summary.bot.username.padEnd(12)} ${summary.bot.id} (bot)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  let closing = false;
  const stop = (): void => {
    if (closing) return;
    closing = true;
    void discord.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`local-discord: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
