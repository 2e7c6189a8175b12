import { ledgerStats } from '@caseloop/case-model';
import { Command, InvalidArgumentError } from 'commander';
import { CommandDeps } from '../command-deps';
import { readWholeStream } from './stream-events';

/** `7d`, `12h`, `30m` (before now) or an ISO time. */
export function parseSince(v: string, now = Date.now()): string {
  const rel = /^(\d+)([dhm])$/.exec(v);
  if (rel) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[rel[2] as 'd' | 'h' | 'm'];
    return new Date(now - Number(rel[1]) * unit).toISOString();
  }
  if (Number.isNaN(Date.parse(v)))
    throw new InvalidArgumentError('expected an ISO time or a duration like 7d, 12h, 30m');
  return new Date(Date.parse(v)).toISOString();
}

const pct = (r: number | null): string => (r === null ? 'n/a' : `${(r * 100).toFixed(1)}%`);

/** `caseloop stats [--since …]`: the trust measures, from the ledger, with their denominators. */
export function registerStatsCommands(program: Command, deps: CommandDeps): void {
  program
    .command('stats')
    .description(
      'duplicate prevention, stale-proof rejections, receipt completeness and verified cycle time, from the ledger',
    )
    .option('--since <when>', 'count events from this time (ISO, or 7d / 12h / 30m ago)', (v) =>
      parseSince(v),
    )
    .option('--until <when>', 'count events up to this time (ISO)', (v) => parseSince(v))
    .option('--json', 'one JSON object')
    .action(async (opts: { since?: string; until?: string; json?: boolean }) => {
      const ctx = deps.context();
      const { events, undecodable } = await readWholeStream(await ctx.ledger());
      const s = ledgerStats(events, { since: opts.since ?? null, until: opts.until ?? null });
      if (opts.json) {
        ctx.io.out(JSON.stringify({ ...s, eventsRead: events.length, undecodable }));
        return;
      }
      const d = s.duplicatePrevention;
      ctx.io.out(
        `window                 ${s.window.since ?? 'beginning'} .. ${s.window.until ?? 'now'} (${events.length} events read${undecodable ? `, ${undecodable} undecodable` : ''})`,
      );
      ctx.io.out(
        `duplicate prevention   ${pct(d.ratio)}  ${d.numerator} linked / ${d.denominator} reports (${d.opened} opened, ${d.linked} linked, ${d.held} held)`,
      );
      ctx.io.out(
        `stale-proof rejections ${pct(s.staleProofRejections.ratio)}  ${s.staleProofRejections.numerator} stale / ${s.staleProofRejections.denominator} passing check runs`,
      );
      ctx.io.out(
        `receipt completeness   ${pct(s.receiptCompleteness.ratio)}  ${s.receiptCompleteness.numerator} confirmed at every source / ${s.receiptCompleteness.denominator} receipts routed`,
      );
      const c = s.cycleTime;
      ctx.io.out(
        `cycle time (verified)  ${c.verifiedCompletions} completion(s)${c.verifiedCompletions ? `: p50 ${c.p50Minutes} min, p90 ${c.p90Minutes} min, mean ${c.meanMinutes} min` : ''}`,
      );
      ctx.io.out(`improvement candidates ${s.improvementCandidates}`);
    });
}
