import { benchAppend } from './ledger/append';
import { note } from './ledger/metrics';
import { runProjectionBenchmarks } from './ledger/projections.bench';

/**
 * `npm run bench:ledger`: every ledger figure measured in one run on this machine, each beside its
 * raw limit, as JSON lines on stdout (progress on stderr). Sections run one after another so they
 * do not compete for the two cores; `BENCH_ONLY=append,projections` picks some.
 */
const size = (key: string): number | undefined => (process.env[key] ? Number(process.env[key]) : undefined);
/** Smaller runs (e.g. to compare runtimes side by side): LEDGER_BENCH_APPEND_EVENTS, _REBUILD_EVENTS, _AUDIT_EVENTS. */
const sections: Record<string, () => Promise<void>> = {
  append: () =>
    benchAppend({ natsUrl: process.env.CASELOOP_BENCH_NATS_URL, events: size('LEDGER_BENCH_APPEND_EVENTS') }),
  projections: () =>
    runProjectionBenchmarks({
      rebuildEvents: size('LEDGER_BENCH_REBUILD_EVENTS'),
      auditStreamEvents: size('LEDGER_BENCH_AUDIT_EVENTS'),
    }),
};

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY?.split(',').filter(Boolean);
  for (const [name, run] of Object.entries(sections)) {
    if (only && !only.includes(name)) continue;
    note(`section ${name}`);
    await run();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
