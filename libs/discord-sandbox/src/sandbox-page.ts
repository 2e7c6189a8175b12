import { renderDiscordMarkdown } from '@caseloop/discord-markdown';

/**
 * The sandbox's web chat page: one self-contained document (no build step, no external assets).
 * Everything user-authored is inserted with textContent, never parsed as HTML.
 */
export const sandboxPage = (): string => PAGE;

/** The shared renderer as page script: it refers to nothing outside its own body (its unit test runs it that way). */
const MARKDOWN_SCRIPT = renderDiscordMarkdown.toString();
if (/<\/script/i.test(MARKDOWN_SCRIPT))
  throw new Error('the markdown renderer cannot be inlined into a <script>');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>caseloop sandbox</title>
<style>
  :root { --bg: #313338; --side: #2b2d31; --side2: #1e1f22; --text: #dbdee1; --muted: #949ba4; --accent: #5865f2;
          --hover: #35373c; --chip: #3f4147; --reporter: #3498db; --reviewer: #e67e22; --stranger: #95a5a6; --bot: #5865f2; --webhook: #9b59b6; }
  * { box-sizing: border-box; }
  body { margin: 0; height: 100vh; display: flex; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--text); }
  aside { width: 260px; background: var(--side); display: flex; flex-direction: column; }
  aside header { padding: 14px 16px; font-weight: 700; border-bottom: 1px solid var(--side2); }
  nav { flex: 1; overflow-y: auto; padding: 8px; }
  .section { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; margin: 12px 8px 4px; }
  .chan { display: block; width: 100%; text-align: left; background: none; border: 0; color: var(--muted); padding: 6px 8px; border-radius: 4px; cursor: pointer; font: inherit; }
  .chan:hover { background: var(--hover); color: var(--text); }
  .chan.active { background: var(--chip); color: #fff; }
  .chan { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  .chan.thread { padding-left: 26px; font-size: 14px; }
  .who { padding: 12px; background: var(--side2); }
  .who label { display: block; color: var(--muted); font-size: 12px; margin-bottom: 4px; }
  select, textarea, button.send { font: inherit; color: var(--text); background: var(--chip); border: 1px solid #1118; border-radius: 6px; }
  select { width: 100%; padding: 6px; }
  main { flex: 1; display: flex; flex-direction: column; min-width: 0; }
  main > header { padding: 12px 16px; border-bottom: 1px solid var(--side2); display: flex; gap: 12px; align-items: baseline; }
  main > header h1 { font-size: 16px; margin: 0; }
  main > header .topic { color: var(--muted); font-size: 13px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  #status { margin-left: auto; font-size: 12px; color: var(--muted); white-space: nowrap; }
  #status.live::before { content: "● "; color: #23a55a; }
  #messages { flex: 1; overflow-y: auto; padding: 12px 0; }
  .empty { color: var(--muted); text-align: center; margin-top: 40px; }
  .msg { display: flex; gap: 12px; padding: 6px 16px; }
  .msg:hover { background: #2e3035; }
  .avatar { width: 38px; height: 38px; border-radius: 50%; flex: none; display: grid; place-items: center; font-weight: 700; color: #fff; }
  .body { min-width: 0; flex: 1; }
  .meta { display: flex; gap: 8px; align-items: baseline; }
  .name { font-weight: 600; color: #fff; }
  .badge { font-size: 10px; font-weight: 700; text-transform: uppercase; padding: 1px 5px; border-radius: 3px; color: #fff; }
  .time { color: var(--muted); font-size: 12px; }
  .content { white-space: pre-wrap; overflow-wrap: anywhere; }
  .content .md-h1, .content .md-h2, .content .md-h3 { font-weight: 700; color: #f2f3f5; line-height: 1.3; margin: 6px 0 2px; }
  .content .md-h1 { font-size: 1.5em; }
  .content .md-h2 { font-size: 1.25em; }
  .content .md-h3 { font-size: 1.1em; }
  .content strong { color: #f2f3f5; }
  .content code { font: 0.85em/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
  .content .md-code { background: var(--side2); border-radius: 4px; padding: 0.1em 0.3em; }
  .content .md-pre { margin: 4px 0; padding: 8px 10px; background: var(--side); border: 1px solid var(--side2); border-radius: 4px; white-space: pre-wrap; max-width: 90ch; }
  .content .md-link { color: #00a8fc; text-decoration: none; }
  .content .md-link:hover { text-decoration: underline; }
  .content .md-list { margin: 2px 0; padding-left: 1.4em; }
  .content .md-depth-1 { margin-left: 1.2em; }
  .content .md-depth-2 { margin-left: 2.4em; }
  .content .md-depth-3 { margin-left: 3.6em; }
  .content .md-depth-4 { margin-left: 4.8em; }
  .content .md-quote { margin: 2px 0; padding-left: 10px; border-left: 4px solid #4e5058; }
  .emoji.fallback { color: var(--muted); }
  .emoji.fallback[data-emoji="✅"], .emoji.fallback[data-emoji="✔️"] { color: #23a55a; }
  .emoji.fallback[data-emoji="❌"] { color: #f23f43; }
  .emoji.fallback[data-emoji="⚠️"], .emoji.fallback[data-emoji="⚠"], .emoji.fallback[data-emoji="⏱️"] { color: #f0b232; }
  .mention { background: #5865f24d; color: #c9cdfb; border-radius: 3px; padding: 0 2px; }
  .replyto { color: var(--muted); font-size: 13px; margin-bottom: 2px; }
  .reactions { display: flex; gap: 4px; margin-top: 4px; }
  .reaction { background: var(--chip); border: 1px solid var(--accent); border-radius: 8px; padding: 0 6px; font-size: 14px; display: inline-flex; gap: 4px; align-items: baseline; }
  .reaction .emoji.fallback { color: var(--text); font-size: 13px; }
  .threadlink { margin-top: 4px; background: none; border: 1px solid var(--chip); color: #00a8fc; border-radius: 6px; padding: 3px 8px; cursor: pointer; font: inherit; font-size: 13px; }
  .attachment { color: var(--muted); font-size: 13px; }
  form { display: flex; gap: 8px; padding: 12px 16px 16px; align-items: flex-end; }
  textarea { flex: 1; resize: none; padding: 10px 12px; min-height: 44px; max-height: 160px; }
  .opts { display: flex; flex-direction: column; gap: 6px; }
  .opts label { font-size: 12px; color: var(--muted); white-space: nowrap; }
  button.send { background: var(--accent); border: 0; padding: 10px 18px; cursor: pointer; color: #fff; font-weight: 600; }
  button.send:disabled { opacity: .5; cursor: default; }
  #typing { color: var(--muted); font-size: 12px; padding: 0 16px; min-height: 1.2em; font-style: italic; }
  .msg { position: relative; }
  .msg .actions { position: absolute; right: 16px; top: 4px; display: none; }
  .msg:hover .actions { display: block; }
  .msg .actions button { background: var(--side); color: var(--text); border: 1px solid var(--side2); border-radius: 4px; cursor: pointer; font: inherit; font-size: 12px; padding: 2px 8px; }
  #error { color: #f23f43; font-size: 13px; padding: 0 16px; min-height: 1em; }
  .components { display: flex; flex-direction: column; gap: 6px; margin-top: 6px; }
  .row { display: flex; gap: 8px; flex-wrap: wrap; }
  .btn { font: inherit; font-size: 14px; color: #fff; border: 0; border-radius: 4px; padding: 5px 14px; cursor: pointer; }
  .btn[disabled] { opacity: .5; cursor: not-allowed; }
  .btn.s1 { background: #5865f2; } .btn.s2 { background: #4e5058; } .btn.s3 { background: #248046; } .btn.s4 { background: #da373c; } .btn.s5 { background: #4e5058; }
  .ephemeral { margin: 2px 16px 6px 66px; padding: 6px 10px; border-left: 3px solid var(--accent); background: #2b2d31; color: var(--text); font-size: 14px; }
  .ephemeral small { display: block; color: var(--muted); font-size: 11px; }
  .shot { display: block; max-width: 420px; max-height: 320px; margin-top: 6px; border-radius: 6px; }
  dialog { background: var(--side); color: var(--text); border: 0; border-radius: 8px; min-width: 420px; }
  dialog label { display: block; color: var(--muted); font-size: 12px; margin: 10px 0 4px; text-transform: uppercase; }
  dialog textarea, dialog input { width: 100%; font: inherit; color: var(--text); background: var(--side2); border: 0; border-radius: 4px; padding: 8px; }
  dialog menu { display: flex; justify-content: flex-end; gap: 8px; padding: 0; margin: 14px 0 0; }
</style>
</head>
<body>
<aside>
  <header id="guild">caseloop sandbox</header>
  <nav id="channels" aria-label="Channels"></nav>
  <div class="who">
    <label for="user">Posting as</label>
    <select id="user"></select>
  </div>
</aside>
<main>
  <header><h1 id="title">#</h1><span class="topic" id="topic"></span><span id="status">connecting…</span></header>
  <div id="messages" role="log" aria-live="polite"></div>
  <div id="typing" aria-live="polite"></div>
  <div id="error" role="alert"></div>
  <div id="ephemeral" aria-live="polite"></div>
  <dialog id="modal"><form id="modal-form" method="dialog"><h2 id="modal-title"></h2><div id="modal-fields"></div><menu><button type="button" class="btn s2" id="modal-cancel">Cancel</button><button type="submit" class="btn s1">Submit</button></menu></form></dialog>
  <form id="composer">
    <textarea id="text" rows="1" placeholder="Message" aria-label="Message"></textarea>
    <div class="opts">
      <label><input type="checkbox" id="mention"> mention bot</label>
      <button class="send" id="send" type="submit">Send</button>
    </div>
  </form>
</main>
<script>
'use strict';
const COLORS = { reporter: 'var(--reporter)', reviewer: 'var(--reviewer)', stranger: 'var(--stranger)', bot: 'var(--bot)', webhook: 'var(--webhook)' };
let state = null;
let current = null; // { id, kind: 'channel' | 'thread' }
let lastRendered = '';

const $ = (id) => document.getElementById(id);
function el(tag, props, children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'text') node.textContent = v;
    else if (k === 'style') node.style.cssText = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children || []) if (child) node.append(child);
  return node;
}
async function api(method, path, body) {
  const res = await fetch(path, { method, headers: body ? { 'Content-Type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}
function userName(id) {
  const u = state && (state.users.find((x) => x.id === id) || (state.bot.id === id ? state.bot : null));
  return u ? u.displayName : 'unknown-user';
}

function renderSidebar() {
  $('guild').textContent = state.guild.name;
  const nav = $('channels');
  nav.replaceChildren();
  const guilds = [state.guild].concat(state.otherGuilds || []);
  for (const g of guilds) {
  nav.append(el('div', { class: 'section', text: g.id === state.guild.id ? 'Text channels' : g.name + ' (not bound)' }));
  for (const c of state.channels.filter((x) => x.guildId === g.id)) {
    nav.append(el('button', { class: 'chan' + (current && current.id === c.id ? ' active' : ''), 'data-channel': c.name, title: c.topic || '', onclick: () => open(c.id, 'channel') }, [document.createTextNode('# ' + c.name)]));
    for (const t of state.threads.filter((x) => x.parentId === c.id && !x.archived)) {
      nav.append(el('button', { class: 'chan thread' + (current && current.id === t.id ? ' active' : ''), 'data-thread': t.id, title: t.name, onclick: () => open(t.id, 'thread') }, [emojiNode('🧵'), document.createTextNode(' ' + t.name)]));
    }
  }
  }
  const select = $('user');
  const chosen = select.value;
  select.replaceChildren(...state.users.map((u) => el('option', { value: u.id, text: u.displayName + ' (' + u.persona + ')' })));
  if (chosen) select.value = chosen;
}

// Emoji a machine without an emoji font must still show: drawn when it can, named when it cannot.
const EMOJI_NAMES = {
  '👀': 'eyes', '✅': 'white_check_mark', '✔️': 'heavy_check_mark', '❌': 'x', '⚠️': 'warning', '⚠': 'warning',
  '⏱️': 'stopwatch', '⏱': 'stopwatch', '➖': 'heavy_minus_sign', '🧵': 'thread', '📎': 'paperclip', '👍': 'thumbsup',
  '👎': 'thumbsdown', '🎉': 'tada', '❤️': 'heart', '🚀': 'rocket', '🐛': 'bug', '🔁': 'repeat', '🙏': 'pray',
};
// What a machine without an emoji font can still draw: symbols every common text font carries.
const EMOJI_TEXT = { '✅': '✔', '✔️': '✔', '❌': '✘', '⚠️': '⚠', '⚠': '⚠', '⏱️': '◷', '⏱': '◷', '➖': '–', '🧵': '↳' };
const EMOJI_SPLIT = new RegExp('(' + Object.keys(EMOJI_NAMES).sort((a, b) => b.length - a.length).join('|') + ')');
const emojiFont = (() => {
  try {
    const canvas = document.createElement('canvas');
    canvas.width = 24;
    canvas.height = 24;
    const g = canvas.getContext('2d');
    g.textBaseline = 'top';
    g.font = '20px sans-serif';
    g.fillStyle = '#000';
    g.fillText('👀', 0, 0);
    const px = g.getImageData(0, 0, 24, 24).data;
    // A colour emoji font paints colour; a missing glyph (a box) comes out in the black it was filled with.
    for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && px[i] + px[i + 1] + px[i + 2] > 60) return true;
    return false;
  } catch (e) {
    return false;
  }
})();

function emojiName(emoji) {
  if (Object.prototype.hasOwnProperty.call(EMOJI_NAMES, emoji)) return EMOJI_NAMES[emoji];
  const custom = /^([A-Za-z0-9_]{2,32}):\\d+$/.exec(emoji);
  if (custom) return custom[1];
  return Array.from(emoji).filter((c) => c !== '\\ufe0f').map((c) => 'U+' + c.codePointAt(0).toString(16).toUpperCase()).join(' ');
}
function emojiNode(emoji) {
  const name = emojiName(emoji);
  const custom = /:\\d+$/.test(emoji);
  const fallback = EMOJI_TEXT[emoji] || ':' + name + ':';
  const drawn = emojiFont && !custom;
  return el('span', {
    class: 'emoji' + (drawn ? '' : ' fallback'),
    role: 'img',
    'aria-label': name,
    title: ':' + name + ':',
    'data-emoji': emoji,
    text: drawn ? emoji : fallback,
  });
}
function appendText(parent, text) {
  for (const part of text.split(EMOJI_SPLIT)) {
    if (!part) continue;
    if (Object.prototype.hasOwnProperty.call(EMOJI_NAMES, part)) parent.append(emojiNode(part));
    else parent.append(document.createTextNode(part));
  }
}
// Discord's markdown (the subset a bot writes) is @caseloop/discord-markdown's renderer, the one the
// case page renders receipts with on the server; here it builds DOM nodes: message text never becomes HTML.
${MARKDOWN_SCRIPT}
const DOM_SINK = {
  element: (tag, attrs, children) => el(tag, attrs, children),
  text: (text, verbatim) => {
    if (verbatim) return document.createTextNode(text);
    const words = document.createDocumentFragment();
    appendText(words, text);
    return words;
  },
  mention: (id) => el('span', { class: 'mention', text: '@' + userName(id) }),
};
function renderContent(text) {
  return el('div', { class: 'content' }, renderDiscordMarkdown(text, DOM_SINK));
}

function renderReaction(r) {
  // The name is always there to read (title, label), because the glyph may be a box without an emoji font.
  const who = r.userIds.map(userName).join(', ');
  return el('span', { class: 'reaction', 'data-emoji': r.emoji, title: ':' + emojiName(r.emoji) + ': by ' + who, 'aria-label': emojiName(r.emoji) + ', ' + r.count + ' (' + who + ')' }, [
    emojiNode(r.emoji),
    el('span', { class: 'count', text: String(r.count) }),
  ]);
}

function renderMessages(messages, byId) {
  const box = $('messages');
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  if (messages.length === 0) {
    box.replaceChildren(el('div', { class: 'empty', text: 'No messages yet. Say something.' }));
    return;
  }
  box.replaceChildren(...messages.map((m) => {
    const persona = m.author.persona;
    const when = new Date(m.timestamp);
    const body = el('div', { class: 'body' }, [
      m.replyTo ? el('div', { class: 'replyto', text: '↪ replying to ' + (byId.get(m.replyTo) ? byId.get(m.replyTo).author.displayName + ': ' + byId.get(m.replyTo).content.slice(0, 80) : 'a message') }) : null,
      el('div', { class: 'meta' }, [
        el('span', { class: 'name', text: m.author.displayName }),
        el('span', { class: 'badge', style: 'background:' + (COLORS[persona] || COLORS.stranger), text: persona }),
        el('span', { class: 'time', title: when.toISOString(), text: when.toLocaleTimeString() }),
        m.editedTimestamp ? el('span', { class: 'time', title: m.editedTimestamp, text: '(edited)' }) : null,
      ]),
      renderContent(m.content),
      ...m.attachments.map((a) => (a.contentType || '').startsWith('image/')
        ? el('img', { class: 'shot', src: new URL(a.url).pathname, alt: a.filename, title: a.filename + ' (' + a.size + ' bytes)' })
        : el('div', { class: 'attachment' }, [emojiNode('📎'), document.createTextNode(' ' + a.filename + ' (' + a.size + ' bytes)')])),
      m.components && m.components.length ? renderComponents(m) : null,
      m.reactions.length ? el('div', { class: 'reactions' }, m.reactions.map(renderReaction)) : null,
      m.thread ? el('button', { class: 'threadlink', onclick: () => open(m.thread.id, 'thread') }, [emojiNode('🧵'), document.createTextNode(' ' + m.thread.name + ' · ' + m.thread.messageCount + (m.thread.messageCount === 1 ? ' message' : ' messages'))]) : null,
    ]);
    const canThread = current && current.kind === 'channel' && !m.thread;
    return el('div', { class: 'msg', 'data-message-id': m.id }, [
      el('div', { class: 'avatar', style: 'background:' + (COLORS[persona] || COLORS.stranger), text: m.author.displayName.slice(0, 1).toUpperCase() }),
      body,
      canThread ? el('div', { class: 'actions' }, [el('button', { type: 'button', title: 'Start a thread on this message as the selected user', onclick: () => startThread(m) }, [emojiNode('🧵'), document.createTextNode(' Thread')])]) : null,
    ]);
  }));
  if (atBottom) box.scrollTop = box.scrollHeight;
}

function renderComponents(m) {
  return el('div', { class: 'components' }, m.components.map((row) => el('div', { class: 'row' }, (row.components || []).map((c) => {
    if (c.type !== 2) return null;
    if (c.style === 5) return el('a', { class: 'btn s5', href: c.url, target: '_blank', rel: 'noopener', text: c.label || c.url });
    const props = { type: 'button', class: 'btn s' + c.style, 'data-custom-id': c.custom_id, text: c.label || c.custom_id, onclick: () => clickButton(m, c) };
    if (c.disabled) props.disabled = 'disabled';
    return el('button', props);
  }))));
}

/** Clicks as the selected user, then shows what the bot answered: a modal to fill in, or a reply only that user sees. */
async function clickButton(m, c) {
  $('error').textContent = '';
  try {
    const interaction = await api('POST', '/sandbox/components', { authorId: $('user').value, messageId: m.id, customId: c.custom_id });
    await followInteraction(interaction.id);
  } catch (e) {
    $('error').textContent = String(e.message || e);
  }
}

async function followInteraction(id) {
  for (let i = 0; i < 30; i++) {
    const log = await api('GET', '/sandbox/interactions');
    const found = log.find((x) => x.id === id);
    if (found && found.response) {
      if (found.response === 'modal' && found.modal) return openModal(found);
      if (found.reply && found.reply.ephemeral) showEphemeral(found.reply.content);
      return refreshMessages();
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  $('error').textContent = 'The bot did not answer the interaction in time.';
}

function showEphemeral(text) {
  $('ephemeral').replaceChildren(el('div', { class: 'ephemeral' }, [el('small', { text: 'Only you can see this' }), renderContent(text)]));
}

function openModal(interaction) {
  const dialog = $('modal');
  $('modal-title').textContent = interaction.modal.title;
  const inputs = [];
  $('modal-fields').replaceChildren(...interaction.modal.components.map((row) => {
    const c = row.components[0];
    const input = c.style === 2 ? el('textarea', { rows: '4' }) : el('input', { type: 'text' });
    input.setAttribute('data-custom-id', c.custom_id);
    if (c.placeholder) input.setAttribute('placeholder', c.placeholder);
    if (c.max_length) input.setAttribute('maxlength', String(c.max_length));
    if (c.required !== false) input.setAttribute('required', 'required');
    inputs.push(input);
    return el('div', {}, [el('label', { text: c.label }), input]);
  }));
  $('modal-cancel').onclick = () => dialog.close();
  $('modal-form').onsubmit = async (e) => {
    e.preventDefault();
    const values = {};
    for (const input of inputs) values[input.getAttribute('data-custom-id')] = input.value;
    try {
      const submitted = await api('POST', '/sandbox/modals', { authorId: interaction.authorId, interactionId: interaction.id, values });
      dialog.close();
      await followInteraction(submitted.id);
    } catch (err) {
      $('error').textContent = String(err.message || err);
    }
  };
  dialog.showModal();
}

async function refreshMessages() {
  if (!current) return;
  const messages = await api('GET', '/sandbox/channels/' + current.id + '/messages');
  const key = JSON.stringify(messages);
  if (key === lastRendered) return;
  lastRendered = key;
  const byId = new Map(messages.map((m) => [m.id, m]));
  if (current.kind === 'thread') {
    const thread = state.threads.find((t) => t.id === current.id);
    if (thread) {
      const parent = await api('GET', '/sandbox/channels/' + thread.parentId + '/messages');
      for (const m of parent) byId.set(m.id, m);
    }
  }
  renderMessages(messages, byId);
}

async function refreshState() {
  state = await api('GET', '/sandbox/state');
  if (!current && state.channels[0]) current = { id: state.channels[0].id, kind: 'channel' };
  renderSidebar();
  renderHeader();
}

function renderHeader() {
  if (!current) return;
  if (current.kind === 'channel') {
    const c = state.channels.find((x) => x.id === current.id);
    $('title').textContent = '# ' + (c ? c.name : '');
    $('topic').textContent = c && c.topic ? c.topic : '';
    $('text').placeholder = 'Message #' + (c ? c.name : '');
  } else {
    const t = state.threads.find((x) => x.id === current.id);
    $('title').replaceChildren(emojiNode('🧵'), document.createTextNode(' ' + (t ? t.name : 'thread')));
    $('topic').textContent = t ? 'thread in #' + ((state.channels.find((c) => c.id === t.parentId) || {}).name || '') : '';
    $('text').placeholder = 'Message ' + (t ? t.name : 'thread');
  }
}

async function open(id, kind) {
  current = { id, kind };
  lastRendered = '';
  renderSidebar();
  renderHeader();
  await refreshMessages();
}

async function send(event) {
  event.preventDefault();
  const text = $('text').value;
  if (!text.trim() || !current) return;
  $('send').disabled = true;
  $('error').textContent = '';
  try {
    const body = { authorId: $('user').value, content: text, mentionsBot: $('mention').checked };
    if (current.kind === 'thread') body.threadId = current.id; else body.channelId = current.id;
    await api('POST', '/sandbox/messages', body);
    $('text').value = '';
    await refreshMessages();
  } catch (e) {
    $('error').textContent = String(e.message || e);
  } finally {
    $('send').disabled = false;
    $('text').focus();
  }
}

async function startThread(m) {
  $('error').textContent = '';
  try {
    const name = (m.content.replace(/<@!?\\d+>/g, '').trim() || 'thread').slice(0, 90);
    const thread = await api('POST', '/sandbox/threads', { messageId: m.id, name: name, authorId: $('user').value });
    await refreshState();
    await open(thread.id, 'thread');
  } catch (e) {
    $('error').textContent = String(e.message || e);
  }
}

const typing = new Map(); // userId -> { channelId, until }
function renderTyping() {
  const now = Date.now();
  const names = [];
  for (const [userId, t] of typing) {
    if (t.until < now) typing.delete(userId);
    else if (current && t.channelId === current.id) names.push(userName(userId));
  }
  $('typing').textContent = names.length ? names.join(', ') + (names.length > 1 ? ' are' : ' is') + ' typing…' : '';
}
setInterval(renderTyping, 1000);

$('composer').addEventListener('submit', send);
$('text').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); $('composer').requestSubmit(); }
});

function connectFeed() {
  const feed = new EventSource('/sandbox/events');
  feed.addEventListener('open', () => { $('status').textContent = 'live'; $('status').className = 'live'; });
  feed.addEventListener('error', () => { $('status').textContent = 'reconnecting…'; $('status').className = ''; });
  feed.addEventListener('change', async (e) => {
    const change = JSON.parse(e.data);
    if (change.type === 'TYPING_START' && change.userId) {
      typing.set(change.userId, { channelId: change.channelId, until: Date.now() + 10000 });
      renderTyping();
      return;
    }
    if (change.type === 'MESSAGE_CREATE' && change.userId && typing.delete(change.userId)) renderTyping();
    if (change.type === 'THREAD_CREATE' || change.type === 'THREAD_UPDATE') await refreshState();
    if (!current || !change.channelId || change.channelId === current.id || change.type === 'MESSAGE_UPDATE') await refreshMessages();
    else if (current.kind === 'thread') await refreshMessages();
  });
}

(async () => {
  try {
    await refreshState();
    await refreshMessages();
    connectFeed();
    setInterval(() => { refreshMessages().catch(() => {}); }, 5000);
  } catch (e) {
    $('error').textContent = 'Could not load the sandbox: ' + (e.message || e);
  }
})();
</script>
</body>
</html>`;
