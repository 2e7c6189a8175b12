import { Command } from 'commander';
import { CliContext } from './cli.context';

/** What every feature's commands get: the shared context (connections, config, output) and the exit code. */
export interface CommandDeps {
  context(): CliContext;
  setExitCode(code: number): void;
}

/** One feature's commands, added to the program (`caseloop <command>`). */
export type RegisterCommands = (program: Command, deps: CommandDeps) => void;
