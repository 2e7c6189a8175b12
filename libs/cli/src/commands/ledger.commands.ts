import { assertSafeId, decodeEvent, isContractError, RecordedEvent } from '@caseloop/contracts';
import { BoundedStreamReader, rawTextStates, readCaseHistory } from '@caseloop/projections';
import { Command, InvalidArgumentError } from 'commander';
import { CliError } from '../cli.errors';
import { CommandDeps } from '../command-deps';
import { eventJson, formatEvent, formatUndecodable } from '../event-format';

/** The stream itself: replay one case, follow everything, provision the streams. */
export function registerLedgerCommands(program: Command, deps: CommandDeps): void {
  program
    .command('replay')
    .description("print a case's timeline from the stream, with the events of the sources linked to it")
    .argument('<caseId>', 'the case id')
    .option('--json', 'one JSON object per line')
    .action(async (caseId: string, opts: { json?: boolean }) => {
      const ctx = deps.context();
      assertSafeId('caseId', caseId);
      const ledger = await ctx.ledger();
      const h = await readCaseHistory(ledger.nc, ledger.stream, ledger.namespace, caseId, {
        withSources: true,
      });
      if (h.caseEvents.length === 0 && h.undecodable.length === 0) {
        throw new CliError(
          `case ${caseId} has no events in stream ${ledger.stream} (namespace ${ledger.namespace})`,
        );
      }
      // A report's line says what is left of its raw text; the sealed bytes themselves are not printed.
      const raw = rawTextStates(h.sourceEvents);
      const show = (e: RecordedEvent): string => {
        const state = e.type === 'SourceReceived' ? raw.get(e.aggregateId) : undefined;
        if (opts.json) return eventJson(e, state ? { rawText: state } : {});
        return state
          ? `${formatEvent(e)}  raw text: ${state === 'not_kept' ? 'not kept' : state}`
          : formatEvent(e);
      };
      const lines: { seq: number; line: string }[] = [
        ...[...h.caseEvents, ...h.sourceEvents].map((e) => ({ seq: e.seq, line: show(e) })),
        ...h.undecodable.map((u) => ({
          seq: u.seq,
          line: opts.json ? JSON.stringify({ ...u, undecodable: true }) : formatUndecodable(u),
        })),
      ];
      lines.sort((a, b) => a.seq - b.seq);
      for (const l of lines) ctx.io.out(l.line);
    });

  program
    .command('tail')
    .description('follow the stream, one line per event (from now, or from a sequence)')
    .option('--from <seq>', 'start at this stream sequence', positiveInt)
    .option('--json', 'one JSON object per line')
    .option('--limit <n>', 'stop after n events', positiveInt)
    .action(async (opts: { from?: number; json?: boolean; limit?: number }) => {
      const ctx = deps.context();
      const ledger = await ctx.ledger();
      const info = await ledger.jsm.streams.info(ledger.stream);
      const start = opts.from ?? info.state.last_seq + 1;
      const reader = await BoundedStreamReader.open(ledger.js, ledger.jsm, {
        stream: ledger.stream,
        startSeq: start,
        batchSize: 256,
      });
      let stopped = false;
      const stop = () => {
        stopped = true;
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      let seen = 0;
      try {
        while (!stopped && (opts.limit === undefined || seen < opts.limit)) {
          for (const m of await reader.next(1_000)) {
            if (opts.limit !== undefined && seen >= opts.limit) break;
            seen++;
            try {
              const e = decodeEvent(m.subject, m.data, m.seq);
              ctx.io.out(opts.json ? eventJson(e) : formatEvent(e));
            } catch (err) {
              const u = {
                seq: m.seq,
                subject: m.subject,
                error: isContractError(err) ? err.message : String(err),
              };
              ctx.io.out(opts.json ? JSON.stringify({ ...u, undecodable: true }) : formatUndecodable(u));
            }
          }
        }
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        await reader.close();
      }
    });

  program
    .command('provision')
    .description(
      'create or converge the ledger stream, the dead-letter stream and the source key bucket (idempotent)',
    )
    .action(async () => {
      const ctx = deps.context();
      const ledger = await ctx.ledger();
      const result = await ledger.provision();
      for (const s of [result.ledger, result.deadLetters, result.sourceKeys]) {
        ctx.io.out(`${s.name}: ${s.created ? 'created' : s.updated ? 'updated' : 'already as configured'}`);
      }
    });
}

export function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}
