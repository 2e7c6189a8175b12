import { Command, CommanderError } from 'commander';
import { CliContext, CliIo, processIo } from './cli.context';
import { GlobalFlags, parseCliConfig } from './cli.config';
import { describeError } from './cli.errors';
import { COMMAND_FEATURES, RegisterCommands } from './commands';

export function buildProgram(
  io: CliIo,
  env: Record<string, string | undefined>,
  state: { context: CliContext | null; exitCode: number },
  features: readonly RegisterCommands[] = COMMAND_FEATURES,
): Command {
  const program = new Command('caseloop')
    .description(
      'operate the caseloop ledger: replay and audit cases, follow the stream, rebuild projections',
    )
    .option('--nats-url <url>', 'NATS server (env CASELOOP_NATS_URL)')
    .option('--namespace <ns>', 'subject namespace (env CASELOOP_NAMESPACE)')
    .option('--stream <name>', 'ledger stream (env CASELOOP_STREAM)')
    .option('--database-url <url>', 'Postgres URL (env CASELOOP_DATABASE_URL)')
    .option('--db-schema <schema>', 'Postgres schema (env CASELOOP_DB_SCHEMA)')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride();
  const deps = {
    context: (): CliContext => {
      if (!state.context)
        state.context = new CliContext(parseCliConfig(env, program.opts<GlobalFlags>()), io);
      return state.context;
    },
    setExitCode: (code: number) => {
      state.exitCode = Math.max(state.exitCode, code);
    },
  };
  for (const register of features) register(program, deps);
  return program;
}

/** Runs the CLI; resolves to the exit code (0 fine, 1 a finding such as drift, 2 an error). */
export async function run(
  argv: readonly string[],
  io: CliIo = processIo(),
  env = process.env,
  features: readonly RegisterCommands[] = COMMAND_FEATURES,
): Promise<number> {
  const state: { context: CliContext | null; exitCode: number } = { context: null, exitCode: 0 };
  const program = buildProgram(io, env, state, features);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return state.exitCode;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    io.err(`caseloop: ${describeError(e)}`);
    return 2;
  } finally {
    await state.context?.close();
  }
}
