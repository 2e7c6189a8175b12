import { sanitizeReport } from '@caseloop/privacy';

export interface PrivacyScope {
  /** The brief a coding task gets: every source, sanitized, oldest first. */
  brief: string;
  /** Sanitized texts per source (rules and titles only ever see these). */
  texts: string[];
  categories: string[];
  redactions: number;
  /** Share of the original characters that survived (1 when nothing was private). */
  keptRatio: number;
}

const MAX_BRIEF = 8000;

/**
 * What is private never leaves this function: the coordinator derives titles, questions, triage
 * and the task brief from the sanitized texts only. The texts are the redacted copies intake
 * recorded (older events are redacted when read); the raw text is only sealed in the source event.
 */
export function privacyScope(
  sources: readonly { sourceId: string; text: string; rawChars?: number }[],
  markers?: readonly string[],
): PrivacyScope {
  const categories = new Set<string>();
  let redactions = 0;
  let original = 0;
  let kept = 0;
  const texts: string[] = [];
  for (const s of sources) {
    const r = sanitizeReport(s.text, markers ? { privateMarkers: markers } : {});
    texts.push(r.brief);
    for (const c of r.categories) categories.add(c);
    for (const x of r.redactions) redactions += x.count;
    // The raw text's size when the source says it (its text is a redacted copy), else the text's own.
    original += s.rawChars ?? s.text.replace(/\s+/g, '').length;
    kept += r.brief.replace(/\[redacted:[a-z_]+\]/g, '').replace(/\s+/g, '').length;
  }
  const body = texts.map((t, i) => (i === 0 ? `Report:\n${t}` : `Follow-up ${i}:\n${t}`)).join('\n\n');
  const brief = body.length > MAX_BRIEF ? `${body.slice(0, MAX_BRIEF - 20)}\n[…truncated]` : body;
  return {
    brief: brief.trim() || '(empty report)',
    texts,
    categories: [...categories].sort(),
    redactions,
    keptRatio: original === 0 ? 1 : Math.min(1, kept / original),
  };
}

/** Names of the files attached to the sources, sanitized like their texts (a file name may name a customer). */
export function attachmentNames(
  sources: readonly { attachmentNames?: readonly string[] }[],
  markers?: readonly string[],
): string[] {
  return sources.flatMap((s) =>
    (s.attachmentNames ?? []).map(
      (n) => sanitizeReport(n, markers ? { privateMarkers: markers } : {}).brief.trim() || '[unnamed]',
    ),
  );
}

/** A one-line case title from the first sanitized text. */
export function caseTitle(sanitized: string): string {
  const line = sanitized
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0 && !/^(at |File "|Traceback)/.test(l));
  const t = (line ?? 'Report').replace(/\s+/g, ' ');
  return t.length > 120 ? `${t.slice(0, 117)}…` : t;
}
