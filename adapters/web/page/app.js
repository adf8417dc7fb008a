// hob's chat page: sign in with the link's one-time code, then one event stream brings the
// chat (and every change to it) while messages, files and button presses go out as POSTs.
import { drawMenu, messageElement, size, toast } from './view.js';

const $ = (id) => document.getElementById(id);
const list = $('messages');
const text = $('text');
const state = { me: null, commands: [], pending: [], source: null, typingTimer: 0 };

const actions = {
  press: (messageId, data) => post('/api/press', { messageId, data }).catch((error) => toast($('toasts'), error.message, 'error')),
  commandNames: () => new Set(state.commands.map((entry) => entry.command)),
};

/** A JSON POST to hob; throws with hob's own words when it says no. */
async function post(path, body) {
  const response = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const data = response.status === 204 ? {} : await response.json().catch(() => ({}));
  if (response.status === 401) showSignin(data.error);
  if (!response.ok) throw new Error(data.error ?? `hob answered ${response.status}`);
  return data;
}

async function boot() {
  const code = new URLSearchParams(location.hash.slice(1)).get('code');
  if (code) {
    // The code leaves the address bar and the history at once: it works only once anyway.
    history.replaceState(null, '', '/');
    try {
      await post('/api/signin', { code });
    } catch (error) {
      return showSignin(error.message);
    }
  }
  const response = await fetch('/api/me').catch(() => undefined);
  if (!response?.ok) return showSignin();
  connect();
}

function connect() {
  state.source?.close();
  const source = new EventSource('/api/events');
  state.source = source;
  const on = (type, handle) => source.addEventListener(type, (event) => handle(JSON.parse(event.data)));
  on('snapshot', (event) => {
    state.me = event.me;
    state.commands = event.commands;
    showChat();
    list.replaceChildren(...event.messages.map((message) => messageElement(message, actions)));
    list.lastElementChild?.scrollIntoView({ block: 'end' });
    setStatus('connected');
  });
  on('message', ({ message }) => upsert(message));
  on('delete', ({ id }) => find(id)?.remove());
  on('typing', () => showTyping());
  on('notice', ({ text: notice }) => toast($('toasts'), notice));
  on('commands', ({ commands }) => (state.commands = commands));
  on('signedout', () => {
    source.close();
    showSignin('You were signed out.');
  });
  source.addEventListener('error', () => {
    if (source !== state.source) return;
    setStatus('reconnecting…');
    // A closed stream (the server said no) is not retried by the browser: ask why.
    if (source.readyState === EventSource.CLOSED) setTimeout(recheck, 2000);
  });
}

async function recheck() {
  const response = await fetch('/api/me').catch(() => undefined);
  if (response?.status === 401) return showSignin('Your session has ended; sign in again.');
  setTimeout(connect, response ? 0 : 3000);
}

function find(id) {
  return [...list.children].find((item) => item.dataset.id === id);
}

function upsert(message) {
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  const element = messageElement(message, actions);
  const old = find(message.id);
  if (old) old.replaceWith(element);
  else list.append(element);
  if (message.from === 'hob' && !message.live) hideTyping();
  if (atBottom || message.from === 'me') element.scrollIntoView({ block: 'end' });
}

function showTyping() {
  $('typing').hidden = false;
  clearTimeout(state.typingTimer);
  state.typingTimer = setTimeout(hideTyping, 6000);
}

function hideTyping() {
  clearTimeout(state.typingTimer);
  $('typing').hidden = true;
}

function setStatus(words) {
  $('status').textContent = words;
}

function showChat() {
  $('signin').hidden = true;
  $('chat').hidden = false;
  $('actions').hidden = false;
  $('me').textContent = state.me ? `Signed in as ${state.me.name}` : '';
  text.focus();
}

function showSignin(error) {
  state.source?.close();
  state.source = null;
  $('chat').hidden = true;
  $('actions').hidden = true;
  $('me').textContent = '';
  setStatus('');
  $('signin').hidden = false;
  $('signin-error').hidden = !error;
  $('signin-error').textContent = error ?? '';
}

/** Sends what was typed (with the files attached so far), or a command from a button (without them). */
async function send(words, withFiles = true) {
  const attachments = withFiles ? state.pending.map((file) => file.id) : [];
  if (words.trim() === '' && attachments.length === 0) return;
  $('send').disabled = true;
  try {
    await post('/api/messages', { text: words, attachments, nonce: nonce() });
    if (withFiles) {
      if (words === text.value) text.value = '';
      state.pending = [];
      drawPending();
    }
  } catch (error) {
    toast($('toasts'), error.message, 'error');
  } finally {
    $('send').disabled = false;
    $('menu').hidden = true;
  }
}

/** One id per message sent, so a retried POST is not a second message (works without https too). */
function nonce() {
  return [...crypto.getRandomValues(new Uint8Array(12))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

async function upload(files) {
  for (const file of files) {
    const response = await fetch('/api/uploads', {
      method: 'POST',
      headers: { 'Content-Type': file.type || 'application/octet-stream', 'X-File-Name': encodeURIComponent(file.name) },
      body: file,
    });
    const data = await response.json().catch(() => ({}));
    if (response.ok) state.pending.push(data.file);
    else toast($('toasts'), data.error ?? `Could not upload ${file.name}.`, 'error');
  }
  drawPending();
}

function drawPending() {
  $('pending').replaceChildren(
    ...state.pending.map((file) => {
      const item = document.createElement('li');
      item.textContent = `📎 ${file.name} (${size(file.size)})`;
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = '×';
      remove.title = `Do not send ${file.name}`;
      remove.addEventListener('click', () => {
        state.pending = state.pending.filter((other) => other !== file);
        drawPending();
      });
      item.append(remove);
      return item;
    }),
  );
}

function pick(command) {
  text.value = `/${command} `;
  $('menu').hidden = true;
  text.focus();
}

$('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  void send(text.value);
});
text.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    void send(text.value);
  }
});
text.addEventListener('input', () => {
  const typed = text.value;
  if (/^\/\S*$/.test(typed)) drawMenu($('menu'), state.commands, typed, pick);
  else $('menu').hidden = true;
});
$('menu-button').addEventListener('click', () => {
  if ($('menu').hidden) drawMenu($('menu'), state.commands, '/', pick);
  else $('menu').hidden = true;
});
$('files').addEventListener('change', () => {
  const files = [...$('files').files];
  $('files').value = '';
  void upload(files);
});
list.addEventListener('click', (event) => {
  const chip = event.target.closest?.('button.cmd');
  if (!chip) return;
  text.value = `${chip.dataset.command} `;
  text.focus();
});
$('sessions').addEventListener('click', () => void send('/sessions', false));
$('new').addEventListener('click', () => void send('/new', false));
$('signout').addEventListener('click', () => {
  post('/api/signout', {})
    .then(() => showSignin('Signed out.'))
    .catch((error) => toast($('toasts'), error.message, 'error'));
});
$('access').addEventListener('submit', (event) => {
  event.preventDefault();
  post('/api/access', { name: $('access-name').value })
    .then(() => connect())
    .catch((error) => showSignin(error.message));
});

void boot();
