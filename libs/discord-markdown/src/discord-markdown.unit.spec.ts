import { discordMarkdownToHtml, MarkdownSink, renderDiscordMarkdown } from './discord-markdown';

const fence = '`'.repeat(3);

describe('Discord markdown as HTML', () => {
  it('renders headings, bold, italic, code, lists, quotes and code blocks', () => {
    const html = discordMarkdownToHtml(
      [
        '# Receipt',
        '## Checks',
        '### Small print',
        '**Outcome:** PR ready, *checked* and _twice_, __under__ ~~gone~~ `a <b>code</b> span`',
        '- first `item`',
        '  - nested',
        '> quoted **bold**',
        `${fence}js`,
        'const x = "<img src=x>";',
        fence,
        'after',
      ].join('\n'),
    );
    expect(html).toBe(
      [
        '<div class="md-h1" role="heading" aria-level="3">Receipt</div>',
        '<div class="md-h2" role="heading" aria-level="4">Checks</div>',
        '<div class="md-h3" role="heading" aria-level="5">Small print</div>',
        '<div class="md-text"><strong>Outcome:</strong> PR ready, <em>checked</em> and <em>twice</em>, <u>under</u> <s>gone</s> <code class="md-code">a &lt;b&gt;code&lt;/b&gt; span</code></div>',
        '<ul class="md-list"><li>first <code class="md-code">item</code></li><li class="md-depth-1">nested</li></ul>',
        '<blockquote class="md-quote"><div class="md-text">quoted <strong>bold</strong></div></blockquote>',
        '<pre class="md-pre"><code data-language="js">const x = &quot;&lt;img src=x&gt;&quot;;</code></pre>',
        '<div class="md-text">after</div>',
      ].join(''),
    );
  });

  it('links only http(s) URLs, masked, angled or bare, and never opens the referrer', () => {
    const html = discordMarkdownToHtml(
      '[evidence](<https://evidence.example/e/1>), <https://example.org/x> and https://example.com/y.',
    );
    const rel = 'target="_blank" rel="noopener noreferrer nofollow"';
    expect(html).toBe(
      '<div class="md-text">' +
        `<a class="md-link" href="https://evidence.example/e/1" title="https://evidence.example/e/1" ${rel}>evidence</a>, ` +
        `<a class="md-link" href="https://example.org/x" title="https://example.org/x" ${rel}>https://example.org/x</a> and ` +
        `<a class="md-link" href="https://example.com/y" title="https://example.com/y" ${rel}>https://example.com/y</a>.` +
        '</div>',
    );
    for (const bad of [
      '[bad](javascript:alert(1))',
      '[bad](data:text/html,<script>alert(1)</script>)',
      '<javascript:alert(1)>',
      '[x](vbscript:msgbox)',
    ]) {
      expect(discordMarkdownToHtml(bad)).not.toMatch(/<a /);
    }
  });

  it('escapes markup, quotes and attribute breakouts in the text', () => {
    const hostile =
      '<script>alert(1)</script> <img src=x onerror="alert(2)"> **<b>bold</b>** & ' +
      'https://x.example/a"onmouseover="alert(3) [t"x](https://y.example/"><svg onload=alert(4)>)';
    const html = discordMarkdownToHtml(hostile);
    expect(html).not.toMatch(/<(script|img|b|svg)\b/i);
    expect(html).not.toMatch(/\son[a-z]+="/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(2)&quot;&gt;');
    expect(html).toContain('<strong>&lt;b&gt;bold&lt;/b&gt;</strong> &amp; ');
    // Every attribute value is a quoted, escaped string: nothing closes it early.
    for (const [, value] of html.matchAll(/="([^"]*)"/g)) expect(value).not.toMatch(/[<>"]/);
  });

  it('shows a mention by the name it is given, or by the user id', () => {
    const text = 'ping <@123456789012345678>';
    expect(discordMarkdownToHtml(text)).toBe(
      '<div class="md-text">ping <span class="mention">@123456789012345678</span></div>',
    );
    expect(discordMarkdownToHtml(text, { mentionName: () => 'rita <admin>' })).toBe(
      '<div class="md-text">ping <span class="mention">@rita &lt;admin&gt;</span></div>',
    );
  });

  it('keeps a backslash-escaped marker as text', () => {
    expect(discordMarkdownToHtml('\\*not italic\\* 2 \\< 3')).toBe(
      '<div class="md-text">*not italic* 2 &lt; 3</div>',
    );
  });
});

describe('the renderer shipped to the chat page as its source', () => {
  it('runs on its own, with nothing from this module in scope, and renders the same', () => {
    const standalone = new Function(
      `return (${renderDiscordMarkdown.toString()});`,
    )() as typeof renderDiscordMarkdown;
    const tree: MarkdownSink<string> = {
      element: (tag, attrs, children) => `${tag}${JSON.stringify(attrs)}(${children.join(',')})`,
      text: (t, verbatim) => `${verbatim ? 'v' : 't'}:${JSON.stringify(t)}`,
      mention: (id) => `@${id}`,
    };
    const text = [
      '# Receipt <@123456789012345678>',
      '**Outcome:** ✅ [log](<https://evidence.example/l>) `x`',
      '- a',
      '>>> rest',
      `${fence}\ncode\n${fence}`,
    ].join('\n');
    expect(standalone(text, tree)).toEqual(renderDiscordMarkdown(text, tree));
    expect(standalone(text, tree).join('')).toContain(
      'a{"class":"md-link","href":"https://evidence.example/l"',
    );
  });
});
