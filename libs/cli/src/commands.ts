import { Command } from 'commander';
import { CliContext } from './cli.context';
import { registerLedgerCommands } from './commands/ledger.commands';
import { registerProjectionCommands } from './commands/projections.commands';
import { registerIdentityCommands } from './commands/identity.commands';
import { registerStatsCommands } from './commands/stats.commands';
import { registerRepoCommands } from './commands/repo.commands';
import { registerDiscordCommands } from '../../../services/intake/src/cli/discord.commands';
import { registerTriageCommands } from '../../../services/coordinator/src/cli/triage.commands';

/** What every feature's commands get: the shared context (connections, config, output) and the exit code. */
export interface CommandDeps {
  context(): CliContext;
  setExitCode(code: number): void;
}

export type RegisterCommands = (program: Command, deps: CommandDeps) => void;

/**
 * Every feature's commands, in one place. A feature adds `registerXCommands(program, deps)` in its own
 * file and a line here (`caseloop discord check`, `caseloop stats`, `caseloop identity replay`, …).
 */
export const COMMAND_FEATURES: readonly RegisterCommands[] = [
  registerLedgerCommands,
  registerProjectionCommands,
  registerDiscordCommands,
  registerIdentityCommands,
  registerTriageCommands,
  registerStatsCommands,
  registerRepoCommands,
];
