/**
 * Discord's markdown, the subset a bot writes: bold, italic, underline, strike, inline code, code
 * blocks, http(s) links, lists, quotes, headings and user mentions. One renderer for every place
 * that shows what caseloop posts: the local Discord's chat page builds DOM nodes with it in the
 * browser, the case page builds escaped HTML with it on the server.
 *
 * The renderer never produces markup from the text: it decides structure and hands every piece of
 * text to a sink (a DOM text node, or escaped HTML). Tags and attribute names come only from the
 * renderer's own fixed vocabulary; a link's target is always an http(s) URL.
 */

/** The elements the renderer can ask for, and nothing else. */
export type MarkdownTag =
  'div' | 'span' | 'strong' | 'em' | 'u' | 's' | 'code' | 'pre' | 'a' | 'ul' | 'li' | 'blockquote';

export interface MarkdownSink<N> {
  element(tag: MarkdownTag, attrs: Readonly<Record<string, string>>, children: readonly N[]): N;
  /**
   * Text, never markup. `verbatim` text (code, a URL shown as itself) must be shown exactly as
   * written; other text may be decorated (the chat page draws emoji it knows by name).
   */
  text(text: string, verbatim: boolean): N;
  /** A user mention, `<@id>`. */
  mention(userId: string): N;
}

/**
 * Renders `text` into the nodes of one message body (the caller wraps them).
 *
 * It must stay self-contained (no reference to anything outside its own body, no helper a compiler
 * would add): the chat page ships it to the browser as `renderDiscordMarkdown.toString()`. A unit
 * test runs that source on its own.
 */
export function renderDiscordMarkdown<N>(text: string, sink: MarkdownSink<N>): N[] {
  const MD = {
    escape: /\\([^\sA-Za-z0-9])/y,
    code: /(\u0060+)([\s\S]*?[^\u0060])\1(?!\u0060)/y,
    mention: /<@!?(\d{17,20})>/y,
    masked: /\[([^[\]\n]+)\]\(\s*<?(https?:\/\/[^\s<>()]+)>?\s*\)/y,
    angled: /<(https?:\/\/[^\s<>]+)>/y,
    bare: /https?:\/\/[^\s<>]*[^\s<>.,:;!?"')\]]/y,
    strong: /\*\*(?!\s)([\s\S]*?\S)\*\*/y,
    underline: /__(?!\s)([\s\S]*?\S)__(?!_)/y,
    strike: /~~(?!\s)([\s\S]*?\S)~~/y,
    em: /\*(?![\s*])([\s\S]*?[^\s*])\*(?!\*)/y,
    emUnderscore: /_(?![\s_])([\s\S]*?[^\s_])_(?![A-Za-z0-9_])/y,
  };
  const FENCE = /\u0060\u0060\u0060(?:([A-Za-z0-9_+#.-]+)?\n)?([\s\S]*?)\u0060\u0060\u0060/g;
  const LINK_REL = 'noopener noreferrer nofollow';

  const at = (re: RegExp, s: string, i: number): RegExpExecArray | null => {
    re.lastIndex = i;
    return re.exec(s);
  };
  const safeUrl = (raw: string): string | null => {
    try {
      const url = new URL(raw);
      return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
    } catch {
      return null;
    }
  };
  const link = (href: string, children: N[]): N =>
    sink.element('a', { class: 'md-link', href, title: href, target: '_blank', rel: LINK_REL }, children);

  const inline = (s: string, inLink: boolean): N[] => {
    const out: N[] = [];
    let plain = '';
    const flush = () => {
      if (plain) out.push(sink.text(plain, false));
      plain = '';
    };
    const put = (node: N) => {
      flush();
      out.push(node);
    };
    let i = 0;
    while (i < s.length) {
      const wordBefore = i > 0 && /[A-Za-z0-9]/.test(s.charAt(i - 1));
      let m: RegExpExecArray | null;
      let href: string | null = null;
      if ((m = at(MD.escape, s, i))) {
        plain += m[1];
      } else if ((m = at(MD.code, s, i))) {
        put(sink.element('code', { class: 'md-code' }, [sink.text(m[2] ?? '', true)]));
      } else if ((m = at(MD.mention, s, i))) {
        put(sink.mention(m[1] ?? ''));
      } else if (!inLink && (m = at(MD.masked, s, i)) && (href = safeUrl(m[2] ?? ''))) {
        put(link(href, inline(m[1] ?? '', true)));
      } else if (!inLink && (m = at(MD.angled, s, i)) && (href = safeUrl(m[1] ?? ''))) {
        put(link(href, [sink.text(m[1] ?? '', true)]));
      } else if (!inLink && !wordBefore && (m = at(MD.bare, s, i)) && (href = safeUrl(m[0]))) {
        put(link(href, [sink.text(m[0], true)]));
      } else if ((m = at(MD.strong, s, i))) {
        put(sink.element('strong', {}, inline(m[1] ?? '', inLink)));
      } else if ((m = at(MD.underline, s, i))) {
        put(sink.element('u', {}, inline(m[1] ?? '', inLink)));
      } else if ((m = at(MD.strike, s, i))) {
        put(sink.element('s', {}, inline(m[1] ?? '', inLink)));
      } else if ((m = at(MD.em, s, i)) || (!wordBefore && (m = at(MD.emUnderscore, s, i)))) {
        put(sink.element('em', {}, inline(m[1] ?? '', inLink)));
      } else {
        plain += s.charAt(i);
        i += 1;
        continue;
      }
      i += m[0].length;
    }
    flush();
    return out;
  };

  const blocks = (lines: string[]): N[] => {
    const out: N[] = [];
    let run: string[] = [];
    const flushRun = () => {
      if (!run.length) return;
      // pre-wrap swallows one trailing newline: a blank last line needs a second one to show.
      const joined = run.join('\n') + (run[run.length - 1] === '' ? '\n' : '');
      out.push(sink.element('div', { class: 'md-text' }, inline(joined, false)));
      run = [];
    };
    let i = 0;
    while (i < lines.length) {
      const line = lines[i] ?? '';
      let m: RegExpExecArray | null;
      if ((m = /^>>> ?([\s\S]*)$/.exec(line))) {
        flushRun();
        out.push(
          sink.element('blockquote', { class: 'md-quote' }, blocks([m[1] ?? ''].concat(lines.slice(i + 1)))),
        );
        return out;
      }
      if (/^> |^>$/.test(line)) {
        flushRun();
        const quoted: string[] = [];
        while (i < lines.length && /^> |^>$/.test(lines[i] ?? '')) quoted.push((lines[i++] ?? '').slice(2));
        out.push(sink.element('blockquote', { class: 'md-quote' }, blocks(quoted)));
        continue;
      }
      if ((m = /^(#{1,3}) (?=\S)(.*)$/.exec(line))) {
        flushRun();
        const level = (m[1] ?? '#').length;
        out.push(
          sink.element(
            'div',
            { class: 'md-h' + level, role: 'heading', 'aria-level': String(level + 2) },
            inline(m[2] ?? '', false),
          ),
        );
        i += 1;
        continue;
      }
      if (/^ *[-*] (?=\S)/.test(line)) {
        flushRun();
        const items: N[] = [];
        while (i < lines.length && (m = /^( *)[-*] (?=\S)(.*)$/.exec(lines[i] ?? ''))) {
          const depth = Math.min(Math.floor((m[1] ?? '').length / 2), 4);
          items.push(
            sink.element('li', depth ? { class: 'md-depth-' + depth } : {}, inline(m[2] ?? '', false)),
          );
          i += 1;
        }
        out.push(sink.element('ul', { class: 'md-list' }, items));
        continue;
      }
      run.push(line);
      i += 1;
    }
    flushRun();
    return out;
  };

  const out: N[] = [];
  const prose = (part: string) => {
    if (part) out.push(...blocks(part.split('\n')));
  };
  let last = 0;
  for (const m of text.matchAll(FENCE)) {
    // The line breaks around a code block belong to the block.
    const before = text.slice(last, m.index);
    prose((last ? before.replace(/^\n/, '') : before).replace(/\n$/, ''));
    const body = (m[2] ?? '').replace(/\n$/, '');
    const lang = m[1];
    out.push(
      sink.element('pre', { class: 'md-pre' }, [
        sink.element('code', lang ? { 'data-language': lang } : {}, [sink.text(body, true)]),
      ]),
    );
    last = (m.index ?? 0) + m[0].length;
  }
  prose(last ? text.slice(last).replace(/^\n/, '') : text);
  return out;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};
/** Text and attribute values for HTML: the five markup characters and the backtick. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);

const TAGS: ReadonlySet<string> = new Set<MarkdownTag>([
  'div',
  'span',
  'strong',
  'em',
  'u',
  's',
  'code',
  'pre',
  'a',
  'ul',
  'li',
  'blockquote',
]);
const ATTRIBUTE = /^(class|href|title|target|rel|role|aria-level|data-language)$/;

export interface MarkdownHtmlOptions {
  /** The name a mention shows (without the `@`); the user id when not given. */
  mentionName?: (userId: string) => string;
}

/**
 * The same rendering as HTML text for a server-rendered page: every piece of text and every
 * attribute value escaped, only the renderer's own tags and attributes, no whitespace added
 * between elements (the body is meant for `white-space: pre-wrap`, like the chat page's).
 */
export function discordMarkdownToHtml(text: string, o: MarkdownHtmlOptions = {}): string {
  return renderDiscordMarkdown<string>(text, {
    element(tag, attrs, children) {
      if (!TAGS.has(tag)) throw new Error(`discord-markdown: unexpected element ${tag}`);
      let open = `<${tag}`;
      for (const [name, value] of Object.entries(attrs)) {
        if (!ATTRIBUTE.test(name)) throw new Error(`discord-markdown: unexpected attribute ${name}`);
        open += ` ${name}="${escapeHtml(value)}"`;
      }
      return `${open}>${children.join('')}</${tag}>`;
    },
    text: (t) => escapeHtml(t),
    mention: (id) => `<span class="mention">@${escapeHtml(o.mentionName?.(id) ?? id)}</span>`,
  }).join('');
}
