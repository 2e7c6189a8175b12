import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatProportion, heldOutSplit, wilson } from '@caseloop/identity';
import { z } from 'zod';
import { nextDialogueStep, AskedBefore } from './dialogue.rules';
import { assessReadiness, ReadinessField } from './readiness.rules';

/**
 * `npm run eval:triage [-- --split tune|heldout] [--misses] [--by-file]`: the readiness rules and the dialogue
 * over the triage set of the real-report corpus (libs/identity/eval/corpus/triage*.jsonl): reports
 * and their reporters' replies, each labelled with what it supplies. Prints, with Wilson intervals:
 * how many replies that supply something still missing are understood, how many of the fields a
 * reply makes count it really supplies (and how many replies that supply nothing are taken as
 * supplying), field detection on the reports, and whether the dialogue ever repeats a message or
 * loops. `--misses` lists the errors behind the figures, for the tune split only; `--by-file` adds
 * the tune figures of each corpus file, so that a batch written after the rules shows how they carry.
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
export type TriageItem = z.infer<typeof triageItemSchema> & {
  /** The corpus file the item comes from. */
  file?: string;
};

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
          return { ...r.data, file: f };
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
  /** Of the fields a reply newly made count as found, the share it really supplies. */
  replyPrecision: ReturnType<typeof wilson>;
  /** Replies that supply nothing and still made some field count as found. */
  emptyRepliesTaken: ReturnType<typeof wilson>;
  repeatedMessages: number;
  handoffs: number;
  misses: Array<{ id: string; reply: number; field: string }>;
  /** Fields a reply made count as found that it does not supply. */
  falseReplies: Array<{ id: string; reply: number; field: string; why: string }>;
  /** Report fields labelled and not found (`missed`) or found and not labelled (`spurious`). */
  reportErrors: Array<{ id: string; field: string; kind: 'missed' | 'spurious'; why?: string }>;
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
  let newlyFound = 0;
  let emptyReplies = 0;
  let emptyTaken = 0;
  const misses: TriageFigures['misses'] = [];
  const falseReplies: TriageFigures['falseReplies'] = [];
  const reportErrors: TriageFigures['reportErrors'] = [];
  for (const item of items) {
    const first = readinessAfter(item, 0);
    for (const f of LABELLED) {
      const has = (item.report.supplies as readonly string[]).includes(f);
      const found = f in first.found;
      if (has) labelled += 1;
      if (found) detected += 1;
      if (has && found) tp += 1;
      if (has && !found) reportErrors.push({ id: item.id, field: f, kind: 'missed' });
      if (!has && found) reportErrors.push({ id: item.id, field: f, kind: 'spurious', why: first.found[f] });
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
        const reply = item.replies[n - 1] as TriageItem['replies'][number];
        const supplied = reply.supplies as ReadinessField[];
        for (const f of supplied) {
          if (f in before.found) continue;
          suppliedMissing += 1;
          if (f in r.found) understood += 1;
          else misses.push({ id: item.id, reply: n, field: f });
        }
        const newly = LABELLED.filter((f) => f in r.found && !(f in before.found));
        newlyFound += newly.length;
        for (const f of newly)
          if (!supplied.includes(f))
            falseReplies.push({ id: item.id, reply: n, field: f, why: r.found[f] ?? '' });
        if (supplied.length === 0) {
          emptyReplies += 1;
          if (newly.length > 0) emptyTaken += 1;
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
    replyPrecision: wilson(understood, newlyFound),
    emptyRepliesTaken: wilson(emptyTaken, emptyReplies),
    repeatedMessages: repeated,
    handoffs,
    misses,
    falseReplies,
    reportErrors,
  };
}

if (require.main === module) {
  const i = process.argv.indexOf('--split');
  const splits = (i >= 0 ? (process.argv[i + 1] as string) : 'tune,heldout').split(',');
  // The errors behind the figures, to decide rule changes from: tune only, so that the held-out
  // figures stay a check and are never tuned against.
  const listErrors = process.argv.includes('--misses') || process.argv.includes('--verbose');
  const all = loadTriage();
  // Per file only within tune: a held-out breakdown would be one more look at held out.
  const byFile = process.argv.includes('--by-file') && splits.includes('tune');
  const tuneFiles = [...new Set(all.filter((t) => heldOutSplit(t.product) === 'tune').map((t) => t.file))];
  const groups = [
    ...(byFile ? tuneFiles.map((file) => ({ name: `tune ${file}`, split: 'tune', file })) : []),
    ...splits.map((split) => ({ name: split, split, file: undefined })),
  ];
  for (const { name, split, file } of groups) {
    const items = all.filter(
      (t) =>
        (split === 'all' || heldOutSplit(t.product) === split) && (file === undefined || t.file === file),
    );
    const f = triageFigures(items);
    console.log(`triage ${name}: ${f.items} reports, ${f.replies} replies`);
    console.log(
      `  replies that supply something missing, understood ${formatProportion(f.understood)}   target >= 0.90`,
    );
    console.log(`  fields a reply made count, really supplied ${formatProportion(f.replyPrecision)}`);
    console.log(`  replies that supply nothing, taken as supplying ${formatProportion(f.emptyRepliesTaken)}`);
    console.log(`  report fields found (recall)    ${formatProportion(f.fieldRecall)}`);
    console.log(`  report fields found (precision) ${formatProportion(f.fieldPrecision)}`);
    console.log(
      `  bot messages repeated in a thread: ${f.repeatedMessages}   target 0; handed to a reviewer: ${f.handoffs}`,
    );
    if (!listErrors || file !== undefined) continue;
    if (split !== 'tune') {
      console.log('  (errors are listed for the tune split only)');
      continue;
    }
    for (const m of f.misses) console.log(`  MISSED ${m.id} reply ${m.reply}: ${m.field}`);
    for (const m of f.falseReplies) console.log(`  FALSE  ${m.id} reply ${m.reply}: ${m.field} (${m.why})`);
    for (const m of f.reportErrors)
      console.log(`  REPORT ${m.kind.toUpperCase()} ${m.id}: ${m.field}${m.why ? ` (${m.why})` : ''}`);
  }
}
