import { readFileSync } from 'node:fs';
import { RecordedEvent } from '@caseloop/contracts';
import {
  applyJudgement,
  decideWithJudge,
  formatProportion,
  IdentityConfigInput,
  identityConfig,
  IdentityIndex,
  inTimeOrder,
  Judgement,
  judgementRouteSchema,
  ModelAdapter,
  modelAdapter,
  ReplayReport,
  replayReportSchema,
  wilson,
} from '@caseloop/identity';
import { z } from 'zod';
import { parseHistory, parseJsonLines } from './channel-history';
import { sanitizeReport } from '@caseloop/privacy';
import { Command, InvalidArgumentError } from 'commander';
import { parse as parseYaml } from 'yaml';
import { CliError } from '../cli.errors';
import { CommandDeps } from '../command-deps';
import { readWholeStream } from './stream-events';

const ratioArg = (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError('expected a number between 0 and 1');
  return n;
};

/** Reads `{id, text, created, author?}` JSON lines; a bad line is refused with its number. */
export function parseReportLines(raw: string, file: string): ReplayReport[] {
  return parseJsonLines(raw, file, replayReportSchema);
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

function readFileOr(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${what} ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function readStructured(file: string, what: string): unknown {
  try {
    return parseYaml(readFileOr(file, what)) ?? {};
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`cannot read ${what} ${file}: ${(e as Error).message}`);
  }
}

/** `{id, cluster}` lines: which reports are the same bug (for figures). */
function readLabels(file: string): Map<string, string> {
  const labels = new Map<string, string>();
  readFileOr(file, 'labels')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      const r = z.object({ id: z.string().min(1), cluster: z.string().min(1) }).safeParse(JSON.parse(line));
      if (!r.success) throw new CliError(`${file}:${i + 1}: expected {id, cluster}`);
      labels.set(r.data.id, r.data.cluster);
    });
  return labels;
}

/** Recorded judgements (`judgement` fields of an earlier replay's output), by report id. */
function readJudgements(file: string): Map<string, Judgement> {
  const out = new Map<string, Judgement>();
  for (const line of readFileOr(file, 'judgements').split('\n')) {
    if (!line.trim()) continue;
    const j = JSON.parse(line) as { id?: string; judgement?: Judgement | null };
    if (j.id && j.judgement) out.set(j.id, j.judgement);
  }
  return out;
}

/** `caseloop identity replay <file>`: the coordinator's identity rules over a channel's history. */
export function registerIdentityCommands(program: Command, deps: CommandDeps): void {
  const identity = program
    .command('identity')
    .description('case identity: replay exported reports through the matcher');
  identity
    .command('replay')
    .description(
      'read a channel history (JSON lines {id, text, created, author?, replyTo?} or a DiscordChatExporter JSON export) in time order and print one decision per report',
    )
    .argument('<file>', 'a JSON-lines file of reports, or a Discord channel export')
    .option('--ledger', 'start from the open cases in the ledger instead of an empty state')
    .option('--config <file>', 'identity settings (YAML/JSON: thresholds, weights, areas, synonyms)')
    .option('--link <threshold>', 'confidence at or above which a report links', ratioArg)
    .option('--review <threshold>', 'confidence at or above which a report is held for review', ratioArg)
    .option(
      '--labels <file>',
      '{id, cluster} lines: settle reviews as a reviewer would and print figures with 95% intervals',
    )
    .option(
      '--route <file>',
      'a judgement route (YAML/JSON: openai | claude_code | codex) asked "same root cause?"',
    )
    .option(
      '--judgements <file>',
      "an earlier replay's output: its recorded judgements are applied, the model is not called",
    )
    .action(
      async (
        file: string,
        opts: {
          ledger?: boolean;
          config?: string;
          link?: number;
          review?: number;
          labels?: string;
          route?: string;
          judgements?: string;
        },
      ) => {
        const ctx = deps.context();
        const history = parseHistory(readFileOr(file, 'history'), file);
        // Replies in a report's thread belong to that report; only top-level messages are reports,
        // and only their sanitized brief is compared (or shown to a model).
        const reports = history
          .filter((m) => m.replyTo === null)
          .map((m) => ({ ...m, text: sanitizeReport(m.text).brief }));
        let input: IdentityConfigInput = opts.config
          ? (readStructured(opts.config, 'identity settings') as IdentityConfigInput)
          : {};
        if (opts.link !== undefined) input = { ...input, linkThreshold: opts.link };
        if (opts.review !== undefined) input = { ...input, reviewThreshold: opts.review };
        let config;
        try {
          config = identityConfig(input);
        } catch (e) {
          throw new CliError(`invalid identity settings: ${(e as Error).message}`);
        }
        let adapter: ModelAdapter | null = null;
        if (opts.route) {
          const r = judgementRouteSchema.safeParse(readStructured(opts.route, 'judgement route'));
          if (!r.success)
            throw new CliError(
              `invalid judgement route: ${r.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
            );
          adapter = modelAdapter(r.data);
        }
        const recorded = opts.judgements ? readJudgements(opts.judgements) : new Map<string, Judgement>();
        const labels = opts.labels ? readLabels(opts.labels) : null;
        const index = new IdentityIndex(config);
        if (opts.ledger) {
          const { events } = await readWholeStream(await ctx.ledger());
          const seeded = seedFromLedger(index, events);
          ctx.io.err(`seeded with ${seeded} open case(s) from the ledger`);
        }
        const caseCluster = new Map<string, string>();
        const seenClusters = new Set<string>();
        let links = 0;
        let linksRight = 0;
        let heldRight = 0;
        let shouldJoin = 0;
        let reviews = 0;
        let fallbacks = 0;
        for (const r of inTimeOrder(reports)) {
          const parsed = Date.parse(r.created);
          const at = Number.isFinite(parsed) ? parsed : null;
          const query = { text: r.text, at };
          let d = index.decide(query);
          let judgement: Judgement | null = recorded.get(r.id) ?? null;
          if (judgement) {
            const conflicts = new Map(index.candidates(query, 5).map((c) => [c.caseId, c.conflicts]));
            d = applyJudgement(d, judgement, (id) => conflicts.get(id) ?? []);
          } else if (adapter) {
            const j = await decideWithJudge(index, query, adapter, {
              briefOf: (id) => index.brief(id),
              hooks: {
                onFallback: (f) => {
                  fallbacks += 1;
                  ctx.io.err(`${r.id}: model fallback (${f.fallback?.reason}): ${f.fallback?.detail}`);
                },
              },
            });
            d = j.decision;
            judgement = j.judgement;
          }
          const cluster = labels?.get(r.id) ?? null;
          if (cluster !== null && seenClusters.has(cluster)) shouldJoin += 1;
          if (cluster !== null) seenClusters.add(cluster);
          const right =
            d.matchedWith !== null && cluster !== null && caseCluster.get(d.matchedWith) === cluster;
          let caseId = `case-${r.id}`;
          if (d.decision === 'link' && d.matchedWith) {
            caseId = d.matchedWith;
            index.add(caseId, r.id, r.text, null, at);
            links += 1;
            if (right) linksRight += 1;
          } else if (d.decision === 'review' && d.matchedWith) {
            reviews += 1;
            caseId = d.matchedWith;
            // Without labels a held report stays out of the index, as the service holds it.
            if (labels) {
              if (right) index.add(caseId, r.id, r.text, null, at);
              else {
                caseId = `case-${r.id}`;
                index.add(caseId, r.id, r.text, null, at);
              }
            }
          } else index.add(caseId, r.id, r.text, null, at);
          if (cluster !== null && !caseCluster.has(caseId)) caseCluster.set(caseId, cluster);
          if (d.decision !== 'new' && right) heldRight += 1;
          ctx.io.out(
            JSON.stringify({
              id: r.id,
              decision: d.decision,
              caseId,
              confidence: d.confidence,
              matchedWith: d.matchedWith,
              reasons: d.reasons,
              ...(judgement ? { judgement } : {}),
            }),
          );
        }
        if (labels) {
          ctx.io.err(`${reports.length} reports, ${shouldJoin} should join an open case`);
          ctx.io.err(`auto-link precision    ${formatProportion(wilson(linksRight, links))}`);
          ctx.io.err(`link-or-review recall  ${formatProportion(wilson(heldRight, shouldJoin))}`);
          ctx.io.err(`review load per report ${formatProportion(wilson(reviews, reports.length))}`);
        }
        if (adapter) ctx.io.err(`model fallbacks: ${fallbacks}`);
      },
    );
}
