import { readFileSync } from 'node:fs';
import { sanitizeReport } from '@caseloop/privacy';
import { Command } from 'commander';
import { CliError, conversations, parseHistory } from '@caseloop/cli';
import type { CommandDeps } from '@caseloop/cli';
import { AskedBefore, nextDialogueStep } from '../triage/dialogue.rules';
import { assessReadiness } from '../triage/readiness.rules';

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
    .action((file: string, opts: { maxQuestions: number }) => {
      const ctx = deps.context();
      let raw: string;
      try {
        raw = readFileSync(file, 'utf8');
      } catch (e) {
        throw new CliError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      }
      if (!Number.isInteger(opts.maxQuestions) || opts.maxQuestions < 1)
        throw new CliError('--max-questions must be a positive integer');
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
          const r = assessReadiness({
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
            }),
          );
        }
      }
      ctx.io.err(
        `${convs.length} report(s): ${ready} ready after their thread, ${asks} question(s), ${handoffs} handed to a reviewer, ${repeated} repeated message(s)`,
      );
    });
}
