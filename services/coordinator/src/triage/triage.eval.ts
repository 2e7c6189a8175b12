import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatProportion, heldOutSplit, wilson } from '@caseloop/identity';
import { z } from 'zod';
import { nextDialogueStep, AskedBefore } from './dialogue.rules';
import { assessReadiness, ReadinessField } from './readiness.rules';

/**
 * `npm run eval:triage [-- --split tune|heldout] [--verbose]`: the readiness rules and the dialogue
 * over the triage set of the real-report corpus (libs/identity/eval/corpus/triage*.jsonl): reports
 * and their reporters' replies, each labelled with what it supplies. Prints, with Wilson intervals:
 * how many replies that supply something still missing are understood, field detection on the
 * reports, and whether the dialogue ever repeats a message or loops.
 */
const supplies = z.enum(['environment', 'expected', 'actual', 'impact', 'evidence']);
const message = z.object({
  text: z.string().min(1),
  attachments: z.number().int().min(0).default(0),
  supplies: z.array(supplies),
});
export const triageItemSchema = z.object({
  id: z.string().min(1),
  product: z.string().min(1),
  source: z.string().url(),
  report: message,
  replies: z.array(message),
});
export type TriageItem = z.infer<typeof triageItemSchema>;

export const TRIAGE_DIR = join(__dirname, '../../../../libs/identity/eval/corpus');

export function loadTriage(dir = TRIAGE_DIR): TriageItem[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith('triage') && f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l, i) => {
          const r = triageItemSchema.safeParse(JSON.parse(l));
          if (!r.success) throw new Error(`${f}:${i + 1}: ${r.error.message}`);
          return r.data;
        }),
    );
}

/** The channel is bound to the item's product, as the sandbox's #bugs is bound to the shop. */
const route = (item: TriageItem) => ({ channelId: 'c', repository: 'repo', owner: item.product });
const LABELLED: readonly ReadinessField[] = supplies.options;

function readinessAfter(item: TriageItem, n: number) {
  const msgs = [item.report, ...item.replies.slice(0, n)];
  return assessReadiness({
    texts: msgs.map((m) => m.text),
    attachments: msgs.reduce((a, m) => a + m.attachments, 0),
    keptRatio: 1,
    route: route(item),
    repositories: [{ id: 'repo', owner: item.product }],
    regression: false,
  });
}

export interface TriageFigures {
  items: number;
  replies: number;
  understood: ReturnType<typeof wilson>;
  fieldRecall: ReturnType<typeof wilson>;
  fieldPrecision: ReturnType<typeof wilson>;
  repeatedMessages: number;
  handoffs: number;
  misses: Array<{ id: string; reply: number; field: string }>;
}

export function triageFigures(items: readonly TriageItem[]): TriageFigures {
  let suppliedMissing = 0;
  let understood = 0;
  let tp = 0;
  let labelled = 0;
  let detected = 0;
  let repeated = 0;
  let handoffs = 0;
  let replies = 0;
  const misses: TriageFigures['misses'] = [];
  for (const item of items) {
    const first = readinessAfter(item, 0);
    for (const f of LABELLED) {
      const has = (item.report.supplies as readonly string[]).includes(f);
      const found = f in first.found;
      if (has) labelled += 1;
      if (found) detected += 1;
      if (has && found) tp += 1;
    }
    // The dialogue over the thread: one step per message, as the coordinator would take it.
    const asked: AskedBefore[] = [];
    const sent: string[] = [];
    let handedOff = false;
    for (let n = 0; n <= item.replies.length; n++) {
      const r = readinessAfter(item, n);
      if (n > 0) {
        replies += 1;
        const before = readinessAfter(item, n - 1);
        for (const f of (item.replies[n - 1] as TriageItem['replies'][number]).supplies as ReadinessField[]) {
          if (f in before.found) continue;
          suppliedMissing += 1;
          if (f in r.found) understood += 1;
          else misses.push({ id: item.id, reply: n, field: f });
        }
      }
      const step = nextDialogueStep({
        caseId: item.id,
        missing: r.missing,
        found: r.found,
        asked,
        newSinceLastQuestion: true,
        maxQuestions: 3,
        handedOff,
      });
      const text = step.kind === 'ask' ? step.question : step.kind === 'handoff' ? step.message : null;
      if (text !== null) {
        if (sent.includes(text)) repeated += 1;
        sent.push(text);
      }
      if (step.kind === 'ask') asked.push({ missing: r.missing, question: step.question });
      if (step.kind === 'handoff') {
        handoffs += 1;
        handedOff = true;
      }
    }
  }
  return {
    items: items.length,
    replies,
    understood: wilson(understood, suppliedMissing),
    fieldRecall: wilson(tp, labelled),
    fieldPrecision: wilson(tp, detected),
    repeatedMessages: repeated,
    handoffs,
    misses,
  };
}

if (require.main === module) {
  const i = process.argv.indexOf('--split');
  const splits = (i >= 0 ? (process.argv[i + 1] as string) : 'tune,heldout').split(',');
  const all = loadTriage();
  for (const split of splits) {
    const items = all.filter((t) => split === 'all' || heldOutSplit(t.product) === split);
    const f = triageFigures(items);
    console.log(`triage ${split}: ${f.items} reports, ${f.replies} replies`);
    console.log(
      `  replies that supply something missing, understood ${formatProportion(f.understood)}   target >= 0.90`,
    );
    console.log(`  report fields found (recall)    ${formatProportion(f.fieldRecall)}`);
    console.log(`  report fields found (precision) ${formatProportion(f.fieldPrecision)}`);
    console.log(
      `  bot messages repeated in a thread: ${f.repeatedMessages}   target 0; handed to a reviewer: ${f.handoffs}`,
    );
    if (process.argv.includes('--verbose'))
      for (const m of f.misses) console.log(`  MISSED ${m.id} reply ${m.reply}: ${m.field}`);
  }
}
