import { z } from 'zod';
import { ReplayReport, replayReportSchema } from '@caseloop/identity';
import { CliError } from '../cli.errors';

/**
 * A channel's history, as `caseloop identity|triage replay` read it: JSON lines
 * (`{id, text, created, author?, replyTo?}`), or a Discord channel export in DiscordChatExporter's
 * JSON format (`{guild, channel, messages: [{id, type, timestamp, content, author, attachments,
 * reference?}]}`). Bot messages are left out; a message that replies to another (`replyTo`, or a
 * Discord reply's `reference.messageId`) is part of that report's conversation, not a new report.
 */
export interface HistoryMessage extends ReplayReport {
  replyTo: string | null;
  attachments: number;
}

const jsonLine = replayReportSchema.extend({
  replyTo: z.string().min(1).max(200).nullable().optional(),
  attachments: z.number().int().min(0).optional(),
});

const exporterMessage = z.object({
  id: z.string().min(1),
  type: z.string().optional(),
  timestamp: z.string().min(1),
  content: z.string().default(''),
  author: z
    .object({ id: z.string(), name: z.string().optional(), isBot: z.boolean().optional() })
    .passthrough(),
  attachments: z.array(z.unknown()).default([]),
  reference: z.object({ messageId: z.string().nullable().optional() }).passthrough().nullable().optional(),
});
const exporterFile = z.object({
  channel: z.object({ id: z.string(), name: z.string().optional() }).passthrough().optional(),
  messages: z.array(z.unknown()),
});

export function parseHistory(raw: string, file: string): HistoryMessage[] {
  const trimmed = raw.trimStart();
  if (trimmed.startsWith('{') && !trimmed.split('\n', 1)[0]?.trim().endsWith('}'))
    return parseExport(raw, file);
  if (trimmed.startsWith('{')) {
    // One JSON object over the whole file is an export; one per line is JSON lines.
    try {
      const whole = JSON.parse(raw) as unknown;
      if (whole && typeof whole === 'object' && 'messages' in whole) return parseExport(raw, file);
    } catch {
      /* JSON lines */
    }
  }
  return parseJsonLines(raw, file, jsonLine).map((m): HistoryMessage => ({
    ...m,
    replyTo: m.replyTo ?? null,
    attachments: m.attachments ?? 0,
  }));
}

function parseExport(raw: string, file: string): HistoryMessage[] {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new CliError(`${file}: not JSON (expected JSON lines or a DiscordChatExporter JSON export)`);
  }
  const f = exporterFile.safeParse(json);
  if (!f.success)
    throw new CliError(`${file}: not a DiscordChatExporter export: ${f.error.issues[0]?.message}`);
  const out: HistoryMessage[] = [];
  f.data.messages.forEach((m, i) => {
    const r = exporterMessage.safeParse(m);
    if (!r.success)
      throw new CliError(
        `${file}: messages[${i}]: ${r.error.issues.map((x) => `${x.path.join('.') || '(root)'} ${x.message}`).join('; ')}`,
      );
    const msg = r.data;
    if (msg.author.isBot) return;
    if (msg.type && !['Default', 'Reply'].includes(msg.type)) return;
    if (!msg.content.trim() && msg.attachments.length === 0) return;
    out.push({
      id: msg.id,
      text: msg.content.slice(0, 16_000),
      created: msg.timestamp,
      author: msg.author.name ?? msg.author.id,
      replyTo: msg.reference?.messageId ?? null,
      attachments: msg.attachments.length,
    });
  });
  return out;
}

/** Reports (messages that reply to nothing) with their replies, in time order. */
export function conversations(
  history: readonly HistoryMessage[],
): Array<{ report: HistoryMessage; replies: HistoryMessage[] }> {
  const byId = new Map(history.map((m) => [m.id, m]));
  const rootOf = (m: HistoryMessage): string => {
    let cur = m;
    for (let i = 0; i < 50 && cur.replyTo && byId.has(cur.replyTo); i++)
      cur = byId.get(cur.replyTo) as HistoryMessage;
    return cur.id;
  };
  const convs = new Map<string, { report: HistoryMessage; replies: HistoryMessage[] }>();
  const ordered = [...history].sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0));
  for (const m of ordered) {
    const root = rootOf(m);
    if (root === m.id) convs.set(m.id, { report: m, replies: [] });
    else convs.get(root)?.replies.push(m);
  }
  return [...convs.values()];
}

/** Parses JSON lines against a schema; a bad line is refused with its file and line number. */
export function parseJsonLines<S extends z.ZodType>(raw: string, file: string, schema: S): z.infer<S>[] {
  const out: z.infer<S>[] = [];
  raw.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new CliError(`${file}:${i + 1}: not JSON`);
    }
    const r = schema.safeParse(json);
    if (!r.success)
      throw new CliError(
        `${file}:${i + 1}: ${r.error.issues.map((x) => `${x.path.join('.') || '(root)'} ${x.message}`).join('; ')}`,
      );
    out.push(r.data as z.infer<S>);
  });
  return out;
}
