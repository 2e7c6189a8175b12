import { readFileSync } from 'node:fs';
import { RecordedEvent } from '@caseloop/contracts';
import {
  IdentityConfigInput,
  identityConfig,
  IdentityIndex,
  replayReports,
  ReplayReport,
  replayReportSchema,
} from '@caseloop/identity';
import { sanitizeReport } from '@caseloop/privacy';
import { Command, InvalidArgumentError } from 'commander';
import { parse as parseYaml } from 'yaml';
import { CliError } from '../cli.errors';
import { CommandDeps } from '../commands';
import { readWholeStream } from './stream-events';

const ratioArg = (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError('expected a number between 0 and 1');
  return n;
};

/** Reads `{id, text, created, author?}` JSON lines; a bad line is refused with its number. */
export function parseReportLines(raw: string, file: string): ReplayReport[] {
  const out: ReplayReport[] = [];
  raw.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new CliError(`${file}:${i + 1}: not JSON`);
    }
    const r = replayReportSchema.safeParse(json);
    if (!r.success)
      throw new CliError(
        `${file}:${i + 1}: ${r.error.issues.map((x) => `${x.path.join('.') || '(root)'} ${x.message}`).join('; ')}`,
      );
    out.push(r.data);
  });
  return out;
}

/**
 * Seeds the index with the ledger's open cases: each case's sources (their sanitized texts), minus
 * cases that were approved, rejected or folded into another. The same rules the coordinator uses.
 */
export function seedFromLedger(index: IdentityIndex, events: readonly RecordedEvent[]): number {
  const texts = new Map<string, string>();
  const sources = new Map<string, string[]>();
  const closed = new Set<string>();
  for (const e of events) {
    if (e.type === 'SourceReceived') texts.set(e.data.sourceId, e.data.content);
    if (e.type === 'CaseOpened' || e.type === 'SourceLinked') {
      const list = sources.get(e.aggregateId) ?? [];
      list.push(e.data.sourceId);
      sources.set(e.aggregateId, list);
    }
    if (e.type === 'CaseApproved' || e.type === 'CaseRejected' || e.type === 'CaseMarkedDuplicate')
      closed.add(e.aggregateId);
  }
  let n = 0;
  for (const [caseId, ids] of sources) {
    if (closed.has(caseId)) continue;
    for (const id of ids) {
      const t = texts.get(id);
      if (t !== undefined) index.add(caseId, id, sanitizeReport(t).brief);
    }
    n += 1;
  }
  return n;
}

/** `caseloop identity replay <file.jsonl>`: the coordinator's identity rules over exported reports. */
export function registerIdentityCommands(program: Command, deps: CommandDeps): void {
  const identity = program
    .command('identity')
    .description('case identity: replay exported reports through the matcher');
  identity
    .command('replay')
    .description(
      'read {id, text, created, author?} JSON lines in time order and print one decision per report',
    )
    .argument('<file>', 'a JSON-lines file of reports')
    .option('--ledger', 'start from the open cases in the ledger instead of an empty state')
    .option('--config <file>', 'identity settings (YAML/JSON: thresholds, weights, areas, synonyms)')
    .option('--link <threshold>', 'confidence at or above which a report links', ratioArg)
    .option('--review <threshold>', 'confidence at or above which a report is held for review', ratioArg)
    .action(
      async (file: string, opts: { ledger?: boolean; config?: string; link?: number; review?: number }) => {
        const ctx = deps.context();
        let raw: string;
        try {
          raw = readFileSync(file, 'utf8');
        } catch (e) {
          throw new CliError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
        }
        const reports = parseReportLines(raw, file);
        let input: IdentityConfigInput = {};
        if (opts.config) {
          try {
            input = (parseYaml(readFileSync(opts.config, 'utf8')) ?? {}) as IdentityConfigInput;
          } catch (e) {
            throw new CliError(`cannot read identity settings ${opts.config}: ${(e as Error).message}`);
          }
        }
        if (opts.link !== undefined) input = { ...input, linkThreshold: opts.link };
        if (opts.review !== undefined) input = { ...input, reviewThreshold: opts.review };
        let config;
        try {
          config = identityConfig(input);
        } catch (e) {
          throw new CliError(`invalid identity settings: ${(e as Error).message}`);
        }
        const index = new IdentityIndex(config);
        if (opts.ledger) {
          const { events } = await readWholeStream(await ctx.ledger());
          const seeded = seedFromLedger(index, events);
          ctx.io.err(`seeded with ${seeded} open case(s) from the ledger`);
        }
        const lines = replayReports(reports, index, { caseIdFor: (r) => `case-${r.id}` });
        for (const l of lines) ctx.io.out(JSON.stringify(l));
      },
    );
}
