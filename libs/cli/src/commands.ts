import { RegisterCommands } from './command-deps';
import { registerLedgerCommands } from './commands/ledger.commands';
import { registerProjectionCommands } from './commands/projections.commands';
import { registerIdentityCommands } from './commands/identity.commands';
import { registerStatsCommands } from './commands/stats.commands';
import { registerRepoCommands } from './commands/repo.commands';

export type { CommandDeps, RegisterCommands } from './command-deps';

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
