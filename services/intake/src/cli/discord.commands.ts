import type { CommandDeps } from '@caseloop/cli';
import { Command } from 'commander';
import { runDiscordCheck } from './discord-check';

/** `caseloop discord …`: the operator's view of the Discord connection. */
export function registerDiscordCommands(program: Command, deps: CommandDeps): void {
  const discord = program.command('discord').description('the Discord connection intake uses');
  discord
    .command('check')
    .description(
      'validate the binding and token file, read the bot, guild and channels, open the gateway up to READY, say whether /caseloop is registered; posts nothing',
    )
    .option('--binding <file>', 'binding YAML/JSON (env INTAKE_BINDING_FILE)')
    .option('--token-file <file>', 'bot token file, 0600 (env INTAKE_DISCORD_TOKEN_FILE)')
    .option('--api-url <url>', 'a local Discord, e.g. http://127.0.0.1:PORT/api (env INTAKE_DISCORD_API_URL)')
    .option('--timeout <ms>', 'how long to wait for READY', (v) => Number.parseInt(v, 10), 30_000)
    .action(async (opts: { binding?: string; tokenFile?: string; apiUrl?: string; timeout: number }) => {
      const io = deps.context().io;
      const bindingFile = opts.binding ?? process.env.INTAKE_BINDING_FILE;
      const tokenFile = opts.tokenFile ?? process.env.INTAKE_DISCORD_TOKEN_FILE;
      if (!bindingFile) throw new Error('discord check: no binding file (--binding or INTAKE_BINDING_FILE)');
      if (!tokenFile)
        throw new Error('discord check: no token file (--token-file or INTAKE_DISCORD_TOKEN_FILE)');
      await runDiscordCheck(
        {
          bindingFile,
          tokenFile,
          apiUrl: opts.apiUrl ?? process.env.INTAKE_DISCORD_API_URL ?? null,
          readyTimeoutMs: opts.timeout,
        },
        (line) => io.out(line),
      );
      io.out('discord check: ok');
    });
}
