import { markerSpans, PRIVATE_CONTEXT, ReportCategory } from './categories';
import { applyRedactions, Redaction, redactText } from './scanner';

export const DEFAULT_PRIVATE_MARKERS = ['private', 'confidential', 'customer'] as const;

export interface SanitizeOptions {
  /** Words that, followed by a colon, mark private text. Case-insensitive. */
  privateMarkers?: readonly string[];
  /** Report public IPv4 addresses too (default true: a report's addresses are usually a customer's). */
  ipv4?: boolean;
}

export interface SanitizedReport {
  /** The report with private text and everything the scanner finds replaced by markers. */
  brief: string;
  /** Distinct categories removed, sorted: what the coordinator records as the privacy scope. */
  categories: ReportCategory[];
  redactions: Redaction[];
}

interface Span {
  category: ReportCategory;
  start: number;
  end: number;
}

const MARKERS_ONLY = /\[redacted:[a-z_]+\]/g;

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What a reporter marks private, in the order it is recognised:
 * 1. a fenced code block whose info string is a marker (```private … ```): the whole block;
 * 2. Discord spoilers, `||…||`: reporters already hide sensitive text this way;
 * 3. a line starting with a marker and a colon (`Customer: ACME, account 991`, also after a list
 *    bullet, a quote `>` or in bold): the rest of that line; if nothing follows the colon on that line,
 *    the lines below it up to the next blank line;
 * 4. a bracketed span `(private: …)` or `[confidential: …]` anywhere in a line: its content.
 * A marker word without a colon ("this is a private repo") marks nothing.
 */
function privateSpans(text: string, markers: readonly string[]): Span[] {
  const words = markers.map(escape).join('|');
  const spans: Span[] = [];
  const taken = (start: number, end: number) => spans.some((s) => s.start < end && start < s.end);
  const add = (start: number, end: number) => {
    if (end <= start || taken(start, end)) return;
    // Already redacted (a redacted copy sanitized again): the markers stay as they are.
    if (text.slice(start, end).replace(MARKERS_ONLY, '').trim() === '') return;
    spans.push({ category: PRIVATE_CONTEXT, start, end });
  };

  const fence = new RegExp(
    String.raw`^[ \t]*(\x60{3,}|~{3,})[ \t]*(?:${words})\b[^\n]*\n[\s\S]*?(?:^[ \t]*\1[ \t]*$|(?![\s\S]))`,
    'gim',
  );
  for (const m of text.matchAll(fence)) add(m.index, m.index + m[0].length);

  for (const m of text.matchAll(/\|\|(?!\|)([\s\S]{1,4000}?)\|\|/g)) add(m.index, m.index + m[0].length);

  const line = new RegExp(
    String.raw`^[ \t]*(?:(?:[-*+]|\d{1,3}[.)]|>)[ \t]+)*(?:\*\*|__|\*|_)?(?:${words})(?:\*\*|__|\*|_)?[ \t]*:(?:\*\*|__|\*|_)?[ \t]*`,
    'gim',
  );
  for (const m of text.matchAll(line)) {
    const from = m.index + m[0].length;
    const eol = text.indexOf('\n', from);
    const lineEnd = eol < 0 ? text.length : eol;
    if (text.slice(from, lineEnd).trim().length > 0) {
      add(from, lineEnd);
      continue;
    }
    // a marker alone on its line opens a private paragraph
    const blank = /\n[ \t]*(?:\n|$)/g;
    blank.lastIndex = lineEnd;
    const para = blank.exec(text);
    add(Math.min(lineEnd + 1, text.length), para ? para.index : text.length);
  }

  const bracket = new RegExp(
    String.raw`([(\[])[ \t]*(?:${words})[ \t]*:[ \t]*((?:\[redacted:[a-z_]+\]|[^)\]\n])+)[)\]]`,
    'gi',
  );
  for (const m of text.matchAll(bracket)) {
    const inner = m[2] ?? '';
    const start = m.index + m[0].length - 1 - inner.length;
    add(start, start + inner.trimEnd().length);
  }
  return spans.sort((a, b) => a.start - b.start);
}

/**
 * The coordinator's sanitized brief: text the reporter marked private is removed, then everything the
 * scanner finds (credentials, emails, phone numbers, public IPv4 addresses). The coding task only ever
 * sees `brief`; `categories` becomes the case's privacy scope. Idempotent: sanitizing a brief again
 * returns the same brief, categories and counts (markers already in the text are kept and counted;
 * a reporter who types a marker literally is counted as having had that category removed).
 */
export function sanitizeReport(text: string, options: SanitizeOptions = {}): SanitizedReport {
  const markers = options.privateMarkers ?? DEFAULT_PRIVATE_MARKERS;
  const marked =
    markers.length > 0 ? applyRedactions(text, privateSpans(text, markers)) : { text, redactions: [] };
  const scanned = redactText(marked.text, { ipv4: options.ipv4 ?? true });
  // Counted from the markers in the brief, not from what this pass removed: a report redacted
  // before (the redacted copy intake records) has the same categories as its raw text.
  const counts = new Map<ReportCategory, number>();
  for (const m of markerSpans(scanned.text)) counts.set(m.category, (counts.get(m.category) ?? 0) + 1);
  const redactions = [...counts]
    .map(([category, count]) => ({ category, count }))
    .sort((a, b) => a.category.localeCompare(b.category));
  return { brief: scanned.text, categories: redactions.map((r) => r.category), redactions };
}
