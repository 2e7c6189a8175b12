// The `caseloop` binary (bin/caseloop.js runs this file): the ledger's and projections' commands
// from @caseloop/cli and each service's own commands, put together here, at the top, so that no
// library has to import a service to offer them.
import { CliIo, COMMAND_FEATURES, processIo, RegisterCommands, run as runCommands } from '@caseloop/cli';
import { registerDiscordCommands } from '../services/intake/src/cli/discord.commands';
import { registerForgetCommands } from '../services/intake/src/cli/forget.commands';
import { registerTriageCommands } from '../services/coordinator/src/cli/triage.commands';
import { registerRepoCheckCommand } from './repo-check';

export const CASELOOP_COMMANDS: readonly RegisterCommands[] = [
  ...COMMAND_FEATURES,
  registerDiscordCommands,
  registerForgetCommands,
  registerTriageCommands,
  // After the library's `repo init`: it joins that `repo` group.
  registerRepoCheckCommand,
];

/** Runs the CLI; resolves to the exit code (0 fine, 1 a finding such as drift, 2 an error). */
export function run(argv: readonly string[], io: CliIo = processIo(), env = process.env): Promise<number> {
  return runCommands(argv, io, env, CASELOOP_COMMANDS);
}

if (require.main === module) {
  void run(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
