import { assertSafeId } from '@caseloop/contracts';
import {
  auditCase,
  caseViewProjection,
  listProjectionDeadLetters,
  migrateProjections,
  Projection,
  ProjectionCatalog,
  projectionNamed,
  PROJECTIONS,
  rebuildProjection,
  REBUILD_BATCH,
  RebuildProgress,
  redriveProjectionDeadLetter,
} from '@caseloop/projections';
import { listConsumerDeadLetters } from '@caseloop/ledger';
import { SingleBar } from 'cli-progress';
import { Command } from 'commander';
import { CliError } from '../cli.errors';
import { CommandDeps } from '../command-deps';
import { positiveInt } from './ledger.commands';

/** The Postgres read models: migrate, audit against the stream, rebuild, dead letters. */
export function registerProjectionCommands(program: Command, deps: CommandDeps): void {
  program
    .command('migrate')
    .description('apply the committed migrations and give every projection an active version')
    .action(async () => {
      const ctx = deps.context();
      const ds = await ctx.database();
      const applied = await migrateProjections(ds);
      ctx.io.out(applied.length ? `applied: ${applied.join(', ')}` : 'migrations: up to date');
      const catalog = new ProjectionCatalog(ds);
      for (const p of PROJECTIONS) {
        const v = await catalog.ensure(p);
        ctx.io.out(`${p.name}: v${v.version} active at seq ${v.checkpoint}`);
      }
    });

  program
    .command('audit')
    .description(
      're-fold a case from the stream with evolveCase and compare it with the projection; exit 1 on drift, 3 on undecodable events',
    )
    .argument('<caseId>', 'the case id')
    .option('--json', 'print the audit as one JSON object')
    .option(
      '--scan',
      "read the case by scanning its subjects instead of at the timeline's sequences (slower)",
    )
    .action(async (caseId: string, opts: { json?: boolean; scan?: boolean }) => {
      const ctx = deps.context();
      assertSafeId('caseId', caseId);
      const ledger = await ctx.ledger();
      const ds = await ctx.database({ migrate: true });
      const audit = await auditCase(
        {
          dataSource: ds,
          nc: ledger.nc,
          jsm: ledger.jsm,
          stream: ledger.stream,
          namespace: ledger.namespace,
          scan: Boolean(opts.scan),
        },
        caseId,
      );
      if (audit.eventsFolded === 0 && audit.drift.length === 0) {
        throw new CliError(
          `case ${caseId} has no events up to seq ${audit.checkpoint} in stream ${ledger.stream}`,
        );
      }
      if (opts.json) {
        ctx.io.out(JSON.stringify(audit));
      } else {
        const where = `${caseViewProjection.name} v${audit.version} at seq ${audit.checkpoint}`;
        const ahead = audit.eventsAhead
          ? `; ${audit.eventsAhead} newer event(s) not applied yet (lag, not drift)`
          : '';
        ctx.io.out(`case ${caseId}: ${audit.eventsFolded} event(s) re-folded against ${where}${ahead}`);
        for (const u of audit.undecodable) ctx.io.out(`  undecodable #${u.seq} ${u.subject}: ${u.error}`);
        const said = { sealed: 'sealed', forgotten: 'forgotten', not_kept: 'not kept' } as const;
        const sources = audit.sources.filter((x) => x.rawText);
        if (sources.length > 0)
          ctx.io.out(
            `reports' raw text: ${sources.map((x) => `${x.sourceId} ${said[x.rawText as keyof typeof said]}`).join(', ')}`,
          );
        if (audit.drift.length === 0 && audit.undecodable.length === 0)
          ctx.io.out('clean: the projection equals the fold of the stream');
        if (audit.undecodable.length > 0)
          ctx.io.out(
            `not clean: ${audit.undecodable.length} event(s) this release cannot read (seq ${audit.undecodable
              .map((u) => u.seq)
              .join(', ')}); the fold passed over them`,
          );
        for (const d of audit.drift)
          ctx.io.out(
            `  drift ${d.field}: stream ${JSON.stringify(d.stream)} ≠ projection ${JSON.stringify(d.projection)}`,
          );
        if (audit.drift.length)
          ctx.io.out(
            `${audit.drift.length} field(s) drifted; \`caseloop rebuild ${caseViewProjection.name}\` rebuilds from the stream`,
          );
      }
      // 1: the read model is wrong (drift, whatever else); 3: it agrees with the fold, but the fold
      // passed over events this release cannot read, so the case's history is not fully known.
      if (audit.drift.length > 0) deps.setExitCode(1);
      else if (audit.undecodable.length > 0) deps.setExitCode(3);
    });

  program
    .command('rebuild')
    .description(
      'rebuild a projection beside the live one from sequence 1, verify it, then switch readers to it (resumable)',
    )
    .argument('[projection]', `one of: ${PROJECTIONS.map((p) => p.name).join(', ')} (default: all)`)
    .option('--batch-size <n>', 'events per transaction', positiveInt, REBUILD_BATCH)
    .option(
      '--samples <n>',
      'cases re-folded from the stream and compared before the switch',
      positiveInt,
      20,
    )
    .option('--keep-old', 'keep the retired version’s tables')
    .action(
      async (name: string | undefined, opts: { batchSize: number; samples: number; keepOld?: boolean }) => {
        const ctx = deps.context();
        const ledger = await ctx.ledger();
        const ds = await ctx.database({ migrate: true });
        const targets = name ? [projectionArgument(name, ctx.io)] : PROJECTIONS;
        for (const p of targets) {
          const progress = progressReporter(ctx.io, p.name);
          try {
            const r = await rebuildProjection({
              dataSource: ds,
              nc: ledger.nc,
              stream: ledger.stream,
              namespace: ledger.namespace,
              projection: p,
              batchSize: opts.batchSize,
              sampleSize: opts.samples,
              keepOld: Boolean(opts.keepOld),
              onProgress: progress.update,
            });
            progress.stop();
            ctx.io.out(
              `${p.name}: v${r.version} ${r.resumed ? `resumed at seq ${r.fromCheckpoint}, ` : ''}built to seq ${r.checkpoint}` +
                ` (${r.deadLetters} dead letter(s)); ${r.samples.length} sampled case(s) re-folded clean`,
            );
            for (const t of r.tables) {
              ctx.io.out(
                `  ${t.table}: ${t.rebuilt} rows rebuilt, ${t.live} live (v${r.previous} at seq ${r.liveCheckpoint}); differing: ${t.onlyRebuilt} / ${t.onlyLive}`,
              );
            }
            ctx.io.out(
              `  readers now see v${r.version}; v${r.previous} retired${opts.keepOld ? ' (tables kept)' : ''}`,
            );
          } finally {
            progress.stop();
          }
        }
      },
    );

  program
    .command('dead-letters')
    .description(
      'list the messages projections could not apply; --redrive <seq> re-applies one from the stream',
    )
    .option('--all', 'include dead letters of versions readers no longer see')
    .option(
      '--consumers',
      "list the services' consumer dead letters (the ledger's dead-letter stream) instead",
    )
    .option('--projection <name>', 'the projection', caseViewProjection.name)
    .option(
      '--redrive <seq>',
      're-read the message at this sequence and apply it to the active version',
      positiveInt,
    )
    .option('--json', 'one JSON object per line')
    .action(
      async (opts: {
        all?: boolean;
        consumers?: boolean;
        projection: string;
        redrive?: number;
        json?: boolean;
      }) => {
        const ctx = deps.context();
        if (opts.consumers) {
          if (opts.redrive !== undefined)
            throw new CliError(
              '--redrive applies to projection dead letters; a consumer dead letter is re-driven by its service',
            );
          const ledger = await ctx.ledger();
          const rows = await listConsumerDeadLetters(ledger.jsm, ledger.stream).catch((e: unknown) => {
            if (/stream not found/i.test(String((e as Error).message))) {
              throw new CliError(
                `the dead-letter stream ${ledger.stream}_DLQ is not there (run \`caseloop provision\`)`,
              );
            }
            throw e;
          });
          if (opts.json) for (const r of rows) ctx.io.out(JSON.stringify(r));
          else if (rows.length === 0) ctx.io.out(`${ledger.stream}: no consumer dead letters`);
          else
            for (const r of rows) {
              ctx.io.out(
                `#${r.streamSeq}  consumer ${r.consumer}  ${r.source}  ${r.code ?? '-'}  ${r.reason ?? ''}`.trimEnd(),
              );
            }
          return;
        }
        const ds = await ctx.database({ migrate: true });
        const p = projectionArgument(opts.projection, ctx.io);
        if (opts.redrive !== undefined) {
          const ledger = await ctx.ledger();
          await redriveProjectionDeadLetter(
            { dataSource: ds, nc: ledger.nc, stream: ledger.stream },
            p,
            opts.redrive,
          );
          ctx.io.out(`seq ${opts.redrive}: re-applied to ${p.name}`);
          return;
        }
        const rows = await listProjectionDeadLetters(ds, { all: Boolean(opts.all), projection: p.name });
        if (opts.json) for (const r of rows) ctx.io.out(JSON.stringify(r));
        else if (rows.length === 0) ctx.io.out(`${p.name}: no dead letters`);
        else
          for (const r of rows) {
            ctx.io.out(
              `#${r.seq}  ${r.projection} v${r.version}  ${r.code}  ${r.subject}  ${r.redrivenAt ? `redriven ${r.redrivenAt}` : 'open'}  ${r.error}`,
            );
          }
      },
    );
}

/**
 * Names projections went by before, still accepted where a projection is named (`rebuild <name>`,
 * `dead-letters --projection <name>`) so operators' scripts keep working; each use warns.
 */
export const DEPRECATED_PROJECTION_NAMES: ReadonlyMap<string, string> = new Map([
  ['case-ledger', caseViewProjection.name],
]);

/** The projection an argument names, by its name or by a deprecated one (with a warning on stderr). */
export function projectionArgument(name: string, io: { err(l: string): void }): Projection {
  const current = DEPRECATED_PROJECTION_NAMES.get(name);
  if (current === undefined) return projectionNamed(name);
  io.err(
    `caseloop: warning: the projection ${name} is now called ${current}; the old name is deprecated and will stop being accepted`,
  );
  return projectionNamed(current);
}

/** A progress bar on a terminal; plain lines (at most one per 5%) in logs and pipes. */
function progressReporter(io: { isTTY: boolean; out(l: string): void; err(l: string): void }, name: string) {
  let bar: SingleBar | null = null;
  let lastPct = -1;
  let lastPhase = '';
  return {
    update(p: RebuildProgress) {
      if (io.isTTY) {
        if (p.phase === 'catching_up') {
          if (!bar) {
            bar = new SingleBar({
              format: `${name} v${p.version} [{bar}] {percentage}% | seq {value}/{total} | {eta_formatted}`,
              etaBuffer: 50,
            });
            bar.start(Math.max(p.target, 1), p.checkpoint);
          }
          bar.update(p.checkpoint);
          return;
        }
        if (bar) {
          bar.update(p.target);
          bar.stop();
          bar = null;
        }
        if (p.phase !== lastPhase) io.err(`${name} v${p.version}: ${p.phase.replace('_', ' ')}`);
        lastPhase = p.phase;
        return;
      }
      const pct = p.target ? Math.floor((100 * p.checkpoint) / p.target) : 100;
      if (p.phase !== lastPhase || (p.phase === 'catching_up' && pct >= lastPct + 5)) {
        io.err(
          `${name} v${p.version}: ${p.phase.replace('_', ' ')} seq ${p.checkpoint}/${p.target} (${pct}%)`,
        );
        lastPct = pct;
        lastPhase = p.phase;
      }
    },
    stop() {
      if (bar) {
        bar.stop();
        bar = null;
      }
    },
  };
}
