import { discordMarkdownToHtml, escapeHtml } from '@caseloop/discord-markdown';
import { Eta } from 'eta';
import { CASE_TEMPLATES } from './case.eta';
import { CASES_TEMPLATES } from './cases.eta';
import { FINDINGS_TEMPLATES } from './findings.eta';
import { LAYOUT_TEMPLATES } from './layout.eta';
import { CHECK_TONE, DELIVERY_TONE, PARTIAL_TEMPLATES, STATUS_TONE } from './partials.eta';
import { WAITING_TEMPLATES } from './waiting.eta';

/**
 * The console's view layer: Eta templates, kept as TypeScript modules (so `tsc` carries them into
 * `dist` with the code) and loaded by name. Every `<%= %>` interpolation is escaped by the same
 * function the local Discord's chat page uses; raw output (`<%~ %>`) is reserved for `include`, a
 * layout's body and the markdown renderer, which escapes every text itself (the view unit spec
 * checks that no template uses it otherwise). Templates are compiled from these files only: no data
 * is ever compiled or evaluated.
 */

/** A rendered page: markup made by a template, never by concatenating a report's words. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export { escapeHtml };

/** What a template may interpolate: `null` and `undefined` render as nothing. */
export const escapeValue = (v: unknown): string =>
  v === null || v === undefined ? '' : escapeHtml(String(v));

/** Every template, by name (`@name`), as loaded into the engine. */
export const TEMPLATES: Readonly<Record<string, string>> = {
  ...LAYOUT_TEMPLATES,
  ...PARTIAL_TEMPLATES,
  ...CASES_TEMPLATES,
  ...CASE_TEMPLATES,
  ...WAITING_TEMPLATES,
  ...FINDINGS_TEMPLATES,
};

/** A URL for an attribute: only http(s) and same-site paths; anything else becomes inert. */
export function safeUrl(url: string): string {
  if (url.startsWith('/') && !url.startsWith('//')) return url;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : '#';
  } catch {
    return '#';
  }
}

/** ISO time as the pages show it. */
export const when = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');

export function duration(minutes: number): string {
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${Math.floor(minutes / 1440)} d`;
}

/** The formatting the templates call as `it.h.*`: plain strings, escaped where they are output. */
export const helpers = {
  when,
  duration,
  safeUrl,
  /** `needs_human` → `needs human`. */
  words: (s: string): string => s.replace(/_/g, ' '),
  /** A path segment. */
  seg: (s: string): string => encodeURIComponent(s),
  /**
   * Discord markdown (a receipt as posted) as markup, by the renderer the local Discord's chat
   * page uses: only its own elements, every text and attribute escaped, links only to http(s).
   */
  markdown: (text: string): string => discordMarkdownToHtml(text),
};

export type Helpers = typeof helpers;

const eta = new Eta({
  autoEscape: true,
  escapeFunction: escapeValue,
  cache: true,
  // Only named templates: a name that is not one of TEMPLATES is an error, never a file read.
  views: undefined,
});
for (const [name, source] of Object.entries(TEMPLATES)) eta.loadTemplate(`@${name}`, source);

const tones = { status: STATUS_TONE, delivery: DELIVERY_TONE, check: CHECK_TONE };

/** Renders the named template with its data (and the helpers as `it.h`, the badge tones as `it.tones`). */
export function render(name: string, data: object): Html {
  return new Html(eta.render(`@${name}`, { ...data, h: helpers, tones }));
}
