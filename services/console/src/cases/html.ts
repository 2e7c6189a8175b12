import { discordMarkdownToHtml, escapeHtml } from '@caseloop/discord-markdown';

/**
 * A tiny escaping template: every interpolated value is text unless it is already `Html` made by
 * this module. A report's words can therefore never become markup by forgetting to escape them.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export { escapeHtml };

export type Interpolation = Html | string | number | boolean | null | undefined | readonly Interpolation[];

function render(v: Interpolation): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

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

/**
 * Discord markdown (a receipt as posted) as markup, by the renderer the local Discord's chat page
 * uses: only its own elements, every text and attribute escaped, links only to http(s) URLs.
 */
export const markdown = (text: string): Html => new Html(discordMarkdownToHtml(text));
