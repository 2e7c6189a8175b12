import { readFileSync } from 'node:fs';
import {
  judgeReadiness,
  judgementRouteSchema,
  ModelAdapter,
  modelAdapter,
  ReadinessJudgement,
} from '@caseloop/identity';
import { sanitizeReport } from '@caseloop/privacy';
import { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { CliError, conversations, parseHistory } from '@caseloop/cli';
import type { CommandDeps } from '@caseloop/cli';
import { AskedBefore, nextDialogueStep } from '../triage/dialogue.rules';
import { privacyScope } from '../triage/privacy-scope';
import { assessReadiness, withJudgement } from '../triage/readiness.rules';

function readOr(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${what} ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The readiness judgement route of `--route` (the coordinator's COORDINATOR_READINESS_JUDGEMENT_FILE format). */
function readRoute(file: string): ModelAdapter {
  let doc: unknown;
  try {
    doc = parseYaml(readOr(file, 'judgement route')) ?? {};
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`cannot read judgement route ${file}: ${(e as Error).message}`);
  }
  const r = judgementRouteSchema.safeParse(doc);
  if (!r.success)
    throw new CliError(
      `invalid judgement route: ${r.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
    );
  return modelAdapter(r.data);
}

/** Recorded judgements (`judgement` fields of an earlier replay's output), by report and message. */
function readJudgements(file: string): Map<string, ReadinessJudgement> {
  const out = new Map<string, ReadinessJudgement>();
  readOr(file, 'judgements')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let j: { report?: string; message?: string; judgement?: ReadinessJudgement | null };
      try {
        j = JSON.parse(line) as typeof j;
      } catch {
        throw new CliError(`${file}:${i + 1}: not a JSON line`);
      }
      if (j.report && j.message && j.judgement) out.set(`${j.report}/${j.message}`, j.judgement);
    });
  return out;
}

/**
 * `caseloop triage replay <file>`: the readiness rules and the clarification dialogue over a
 * channel's history (each report with the replies in its thread), so a team sees what the bot
 * would have asked, what it would have understood, and where it would hand over to a reviewer,
 * before turning it on. Texts are sanitized first, as the coordinator sees them.
 */
export function registerTriageCommands(program: Command, deps: CommandDeps): void {
  const triage = program
    .command('triage')
    .description('triage: replay a channel through the readiness dialogue');
  triage
    .command('replay')
    .description(
      'read a channel history (JSON lines {id, text, created, replyTo?, attachments?} or a DiscordChatExporter JSON export); print one line per message: what is still missing and what the bot would say',
    )
    .argument('<file>', 'a JSON-lines history, or a Discord channel export')
    .option('--max-questions <n>', 'questions before a reviewer takes over', (v) => Number(v), 3)
    .option(
      '--route <file>',
      'a readiness judgement route (YAML/JSON: openai | claude_code | codex) asked what each conversation supplies (sanitized text only)',
    )
    .option(
      '--judgements <file>',
      "an earlier replay's output: its recorded judgements are applied, the model is not called",
    )
    .action(async (file: string, opts: { maxQuestions: number; route?: string; judgements?: string }) => {
      const ctx = deps.context();
      let raw: string;
      try {
        raw = readFileSync(file, 'utf8');
      } catch (e) {
        throw new CliError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      }
      if (!Number.isInteger(opts.maxQuestions) || opts.maxQuestions < 1)
        throw new CliError('--max-questions must be a positive integer');
      const adapter = opts.route ? readRoute(opts.route) : null;
      const recorded = opts.judgements
        ? readJudgements(opts.judgements)
        : new Map<string, ReadinessJudgement>();
      let fallbacks = 0;
      let asks = 0;
      let handoffs = 0;
      let repeated = 0;
      let ready = 0;
      const convs = conversations(parseHistory(raw, file));
      for (const { report, replies } of convs) {
        const asked: AskedBefore[] = [];
        const sent = new Set<string>();
        let handedOff = false;
        const msgs = [report, ...replies];
        for (let n = 0; n < msgs.length; n++) {
          const upTo = msgs.slice(0, n + 1);
          const kept = upTo.map((m) => sanitizeReport(m.text));
          const offline = assessReadiness({
            texts: kept.map((k) => k.brief),
            attachments: upTo.reduce((a, m) => a + m.attachments, 0),
            // Share of the text that survived redaction, as the coordinator's privacy scope measures it.
            keptRatio: Math.min(
              ...upTo.map((m, i) =>
                m.text.length === 0 ? 1 : Math.min(1, (kept[i]?.brief.length ?? 0) / m.text.length),
              ),
            ),
            // The replayed channel stands for one product: ownership is not what is being measured.
            route: { channelId: 'replay', repository: 'channel', owner: 'channel' },
            repositories: [{ id: 'channel', owner: 'channel' }],
            regression: false,
          });
          // The route sees what the coordinator would send: the sanitized brief and attachment names.
          let judgement = recorded.get(`${report.id}/${msgs[n]?.id}`) ?? null;
          if (!judgement && adapter) {
            const attachments = upTo.reduce((a, m) => a + m.attachments, 0);
            judgement = await judgeReadiness(adapter, {
              conversation: privacyScope(upTo.map((m) => ({ sourceId: m.id, text: m.text }))).brief,
              attachments: Array.from({ length: attachments }, (_, i) => `attachment ${i + 1}`),
            });
            if (judgement.fallback) {
              fallbacks += 1;
              ctx.io.err(
                `${report.id}/${msgs[n]?.id}: model fallback (${judgement.fallback.reason}): the rules decide`,
              );
            }
          }
          const r =
            judgement && !judgement.fallback
              ? withJudgement(offline, { route: judgement.route, supplied: judgement.supplied })
              : offline;
          const step = nextDialogueStep({
            caseId: report.id,
            missing: r.missing,
            found: r.found,
            asked,
            newSinceLastQuestion: true,
            maxQuestions: opts.maxQuestions,
            handedOff,
          });
          const says = step.kind === 'ask' ? step.question : step.kind === 'handoff' ? step.message : null;
          if (says !== null) {
            if (sent.has(says)) repeated += 1;
            sent.add(says);
          }
          if (step.kind === 'ask') {
            asks += 1;
            asked.push({ missing: r.missing, question: step.question });
          }
          if (step.kind === 'handoff') {
            handoffs += 1;
            handedOff = true;
          }
          if (r.missing.length === 0 && n === msgs.length - 1) ready += 1;
          ctx.io.out(
            JSON.stringify({
              report: report.id,
              message: msgs[n]?.id,
              missing: r.missing,
              found: Object.keys(r.found),
              step: step.kind,
              ...(says ? { says } : {}),
              ...(judgement ? { judgement } : {}),
            }),
          );
        }
      }
      ctx.io.err(
        `${convs.length} report(s): ${ready} ready after their thread, ${asks} question(s), ${handoffs} handed to a reviewer, ${repeated} repeated message(s)` +
          (adapter ? `, ${fallbacks} model fallback(s)` : ''),
      );
    });
}
