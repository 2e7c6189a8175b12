import { Command } from 'commander';
import { CliContext } from './cli.context';
import { registerLedgerCommands } from './commands/ledger.commands';
import { registerProjectionCommands } from './commands/projections.commands';
import { registerIdentityCommands } from './commands/identity.commands';
import { registerStatsCommands } from './commands/stats.commands';
import { registerRepoCommands } from './commands/repo.commands';

/** What every feature's commands get: the shared context (connections, config, output) and the exit code. */
export interface CommandDeps {
  context(): CliContext;
  setExitCode(code: number): void;
}

export type RegisterCommands = (program: Command, deps: CommandDeps) => void;

/**
 * The commands over the ledger and the projections (`caseloop replay`, `audit`, `stats`,
 * `identity replay`, …). A service's own commands (intake's `caseloop discord check`) live in
 * that service, which imports `RegisterCommands` from here; the `caseloop` binary
 * (`scripts/caseloop.ts`) puts both together, so this library never imports a service.
 */
export const COMMAND_FEATURES: readonly RegisterCommands[] = [
  registerLedgerCommands,
  registerProjectionCommands,
  registerIdentityCommands,
  registerStatsCommands,
  registerRepoCommands,
];
