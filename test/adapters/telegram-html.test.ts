import { beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml, loadMarkdown, markdownToTelegramHtml, stripMarkdown } from '../../adapters/telegram/html.js';
import { parseTelegramHtml } from '../fakes/telegram/html.js';

// The Markdown walk loads on first need in hob (html.ts); these call the renderers directly.
beforeAll(() => loadMarkdown());

const allowedTags = new Set(['b', 'i', 's', 'u', 'code', 'pre', 'a', 'blockquote', 'tg-spoiler']);

/**
 * Written apart from the renderer: every `<` starts an allowed tag, attributes are only
 * <a href="…"> and <code class="language-…">, and tags close in order.
 */
function validate(html: string): string[] {
  const problems: string[] = [];
  const open: string[] = [];
  const tag = /<(\/?)([a-z-]*)((?:\s+[a-z]+="[^"<>]*")*)\s*>/gy;
  for (let i = 0; i < html.length; i++) {
    if (html[i] === '>') problems.push(`bare > at ${i}`);
    if (html[i] !== '<') continue;
    tag.lastIndex = i;
    const match = tag.exec(html);
    if (!match) {
      problems.push(`bare < at ${i}`);
      continue;
    }
    const [whole, closing, name = '', attributes = ''] = match;
    if (!allowedTags.has(name)) problems.push(`tag <${name}>`);
    if (closing) {
      if (open.pop() !== name) problems.push(`</${name}> closes the wrong tag`);
    } else {
      const allowed = name === 'a' ? /^\s+href="[^"]*"$/ : name === 'code' ? /^(\s+class="language-[^"]+")?$/ : /^$/;
      if (!allowed.test(attributes)) problems.push(`attributes ${attributes} on <${name}>`);
      open.push(name);
    }
    i += whole.length - 1;
  }
  if (open.length > 0) problems.push(`unclosed ${open.join(', ')}`);
  return problems;
}

function render(markdown: string): string {
  const html = markdownToTelegramHtml(markdown);
  expect(validate(html), html).toEqual([]);
  // The fake follows Telegram's own parser, so this is what Telegram would accept.
  expect(parseTelegramHtml(html)).toMatchObject({ ok: true });
  return html;
}

/** What the person sees: the text Telegram shows once it has parsed the HTML. */
function shown(markdown: string): string {
  const parsed = parseTelegramHtml(render(markdown));
  return parsed.ok ? parsed.text : '';
}

describe('markdownToTelegramHtml', () => {
  it('renders bold, italic, strikethrough and inline code', () => {
    expect(render('**bold** *italic* _also_ ~~gone~~ `x = 1`')).toBe('<b>bold</b> <i>italic</i> <i>also</i> <s>gone</s> <code>x = 1</code>');
  });

  it('nests emphasis inside bold', () => {
    expect(render('**bold _and italic_ and `code`**')).toBe('<b>bold <i>and italic</i> and <code>code</code></b>');
  });

  it('renders a fenced code block with its language for syntax highlighting', () => {
    expect(render('```python\nif a < b:\n    print("hi")\n```')).toBe(
      '<pre><code class="language-python">if a &lt; b:\n    print(&quot;hi&quot;)</code></pre>',
    );
    expect(render('```\nplain\n```')).toBe('<pre>plain</pre>');
  });

  it('links web links and escapes quotes in the href', () => {
    expect(render('[docs](https://example.com/?q="x"&a=1)')).toBe('<a href="https://example.com/?q=&quot;x&quot;&amp;a=1">docs</a>');
    expect(render('see https://example.com')).toBe('see <a href="https://example.com">https://example.com</a>');
    expect(render('[chat](tg://resolve?domain=hob) [mail](mailto:a@b.c)')).toContain('<a href="tg://resolve?domain=hob">chat</a>');
  });

  it('shows javascript: and other links as their text only', () => {
    expect(render('[click me](javascript:alert(1))')).toBe('click me');
    expect(render('[file](file:///etc/passwd) [rel](/relative)')).toBe('file rel');
  });

  it('turns images into links to the image', () => {
    expect(render('![a cat](https://img.example/cat.png)')).toBe('<a href="https://img.example/cat.png">a cat</a>');
  });

  it('renders headings as bold lines', () => {
    expect(render('# Title\n\n## Part *one*\n\nBody')).toBe('<b>Title</b>\n\n<b>Part <i>one</i></b>\n\nBody');
  });

  it('renders lists as bullet and numbered lines, nested ones indented', () => {
    expect(shown('- apples\n- pears\n  - green\n  - red\n\n3. third\n4. fourth')).toBe(
      '• apples\n• pears\n  ◦ green\n  ◦ red\n\n3. third\n4. fourth',
    );
    expect(shown('- [ ] todo\n- [x] done')).toBe('☐ todo\n☑ done');
  });

  it('renders quotes as a blockquote, flattening a quote inside a quote', () => {
    expect(render('> quoted **text**\n> > inner')).toBe('<blockquote>quoted <b>text</b>\n\ninner</blockquote>');
  });

  it('renders a table as a monospace block with aligned columns', () => {
    expect(render('| Name | Qty |\n|:-----|----:|\n| **Apple** | 3 |\n| Kiwi <3 | 12 |')).toBe(
      '<pre>Name    | Qty\n--------+----\nApple   |   3\nKiwi &lt;3 |  12</pre>',
    );
  });

  it('renders a horizontal rule as a line of dashes', () => {
    expect(shown('above\n\n---\n\nbelow')).toBe('above\n\n———\n\nbelow');
  });

  it('renders ||spoilers||', () => {
    expect(render('the answer is ||42||')).toBe('the answer is <tg-spoiler>42</tg-spoiler>');
  });

  it('escapes comparison operators and ampersands so the text shows as written', () => {
    expect(render('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(shown('a < b && c > d')).toBe('a < b && c > d');
  });

  it('shows raw HTML in the input literally instead of passing it through', () => {
    expect(shown('<script>alert(1)</script>')).toBe('<script>alert(1)</script>');
    expect(shown('text with <b onclick="x">tag</b> and <div>\nblock\n</div>')).toContain('<b onclick="x">tag</b>');
  });

  it('produces balanced HTML for half a code fence while streaming', () => {
    expect(render('Here:\n\n```ts\nconst a = 1 <')).toBe('Here:\n\n<pre><code class="language-ts">const a = 1 &lt;</code></pre>');
    render('**unclosed bold and `half code');
    render('> quote with **bold\n\n- list *item');
  });

  it('resolves character references the way Markdown shows them', () => {
    expect(shown('AT&T &amp; &lt;tag&gt; &#169;')).toBe('AT&T & <tag> ©');
  });

  it('gives an empty string for empty input', () => {
    expect(markdownToTelegramHtml('')).toBe('');
    expect(markdownToTelegramHtml('  \n\n ')).toBe('');
  });

  it('only ever emits allowed, balanced tags, whatever the model writes', () => {
    const pieces = ['**', '*', '_', '~~', '`', '```js\n', '\n```\n', '[a](', 'https://x.y', ')', '<', '>', '&', '"', '> ', '- ',
      '1. ', '# ', '\n', '\n\n', '||', '| a | b |\n|---|---|\n', '<b>', '</i>', 'text ', '😀', '![i](', 'javascript:x', '\\'];
    let seed = 7;
    for (let doc = 0; doc < 400; doc++) {
      let markdown = '';
      for (let i = 0; i < 30; i++) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        markdown += pieces[seed % pieces.length];
      }
      render(markdown);
    }
  });
});

describe('escapeHtml', () => {
  it('escapes the characters Telegram treats as markup', () => {
    expect(escapeHtml('<a href="x">&</a>')).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;');
  });
});

describe('stripMarkdown', () => {
  it('drops emphasis markers and backticks but keeps the words', () => {
    expect(stripMarkdown('**bold** and _italic_ and `code` and ~~old~~')).toBe('bold and italic and code and old');
  });

  it('keeps code blocks as written, without the fences', () => {
    expect(stripMarkdown('Run:\n\n```bash\nls -la | grep "*.ts"\n```')).toBe('Run:\n\nls -la | grep "*.ts"');
  });

  it('writes links as text followed by the url', () => {
    expect(stripMarkdown('read [the docs](https://example.com/docs) or https://example.com')).toBe(
      'read the docs (https://example.com/docs) or https://example.com',
    );
  });

  it('keeps headings, lists, quotes and tables readable', () => {
    expect(stripMarkdown('# Plan\n\n- **one**\n- two\n\n> note')).toBe('Plan\n\n• one\n• two\n\n> note');
    expect(stripMarkdown('| a | b |\n|---|---|\n| 1 | 22 |')).toBe('a | b\n--+---\n1 | 22');
  });

  it('leaves HTML-looking text and ampersands unescaped', () => {
    expect(stripMarkdown('a < b && <div>')).toBe('a < b && <div>');
  });
});
