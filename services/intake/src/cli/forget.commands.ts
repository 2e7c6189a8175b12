import { CliError, type CommandDeps } from '@caseloop/cli';
import { assertSafeId, RecordedEvent } from '@caseloop/contracts';
import { Command } from 'commander';
import { ErrorCode, JSONCodec, NatsError } from 'nats';
import { ForgetReply, forgetSubject } from '../intake/source.forgetter';

const SAID: Record<NonNullable<ForgetReply['outcome']>, string> = {
  forgotten: 'raw text forgotten: its key is erased and SourceForgotten is recorded',
  already_forgotten: 'raw text was already forgotten (its key is erased)',
  not_recorded: 'not a recorded report (never received, or dropped): nothing to forget',
};

/**
 * `caseloop forget <sourceId>`: asks intake (the only holder of the source keys) to forget a
 * report's raw text, then reads the source back from the stream. The redacted copy stays; the
 * stream is append-only. Exit 1 when the source is not a recorded report.
 */
export function registerForgetCommands(program: Command, deps: CommandDeps): void {
  program
    .command('forget')
    .description(
      "forget a report's raw text: intake erases the source's key and records SourceForgotten (the redacted copy stays)",
    )
    .argument('<sourceId>', 'the source id, e.g. discord-<message id>')
    .option('--timeout <ms>', 'how long to wait for intake', (v) => Number.parseInt(v, 10), 10_000)
    .action(async (sourceId: string, opts: { timeout: number }) => {
      const ctx = deps.context();
      assertSafeId('sourceId', sourceId);
      const ledger = await ctx.ledger();
      const codec = JSONCodec<ForgetReply>();
      const subject = forgetSubject(ledger.namespace);
      let reply: ForgetReply;
      try {
        const m = await ledger.nc.request(subject, codec.encode({ sourceId }), { timeout: opts.timeout });
        reply = codec.decode(m.data);
      } catch (e) {
        const code = (e as NatsError).code;
        if (code === ErrorCode.NoResponders || code === ErrorCode.Timeout)
          throw new CliError(`intake did not answer on ${subject} (is it running?): nothing was forgotten`);
        throw e;
      }
      if (reply.error || !reply.outcome) throw new CliError(`intake: ${reply.error ?? 'no outcome'}`);
      ctx.io.out(`source ${sourceId}: ${SAID[reply.outcome]}`);
      if (reply.outcome === 'not_recorded') {
        deps.setExitCode(1);
        return;
      }
      const { events } = await ledger.store.load('source', sourceId);
      const f = events.find((e): e is RecordedEvent<'SourceForgotten'> => e.type === 'SourceForgotten');
      if (f)
        ctx.io.out(`  #${f.seq} SourceForgotten reason=${f.data.reason} keyId=${f.data.keyId ?? 'none'}`);
    });
}
