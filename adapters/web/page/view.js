// Drawing the chat. What people wrote, labels and file names go in as text (textContent);
// hob's messages arrive as HTML the server rendered from Markdown with every piece of text
// escaped, and the page's Content-Security-Policy runs no inline script whatever happens.

/** One message as a list item; `actions` has press(id, data) and commandNames(). */
export function messageElement(message, actions) {
  const item = document.createElement('li');
  item.dataset.id = message.id;
  item.className = `message ${message.from === 'hob' ? 'hob' : 'me'}${message.live ? ' live' : ''}`;
  const bubble = document.createElement('div');
  bubble.className = 'bubble';
  if (message.from === 'hob') {
    bubble.innerHTML = message.html ?? '';
    linkCommands(bubble, actions.commandNames());
  } else {
    bubble.textContent = message.text ?? '';
  }
  item.append(bubble);
  for (const attachment of message.attachments ?? []) item.append(fileLine(`📎 ${attachment.name}`, attachment.size));
  if (message.file) {
    const link = document.createElement('a');
    link.className = 'file';
    link.href = message.file.url;
    link.download = message.file.name;
    link.textContent = `⬇ ${message.file.name} (${size(message.file.size)})`;
    item.append(link);
  }
  for (const row of message.buttons ?? []) {
    const line = document.createElement('div');
    line.className = 'buttons';
    for (const button of row) {
      const element = document.createElement('button');
      element.type = 'button';
      element.textContent = button.label;
      element.addEventListener('click', () => {
        for (const other of item.querySelectorAll('.buttons button')) other.disabled = true;
        actions.press(message.id, button.data).finally(() => {
          for (const other of item.querySelectorAll('.buttons button')) other.disabled = false;
        });
      });
      line.append(element);
    }
    item.append(line);
  }
  return item;
}

/** `/new`, `/resume` … in hob's text become buttons that put the command in the message box. */
function linkCommands(root, names) {
  if (names.size === 0) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement?.closest('pre, code, a, button') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
  const pattern = /(^|[\s(])\/([a-z][a-z0-9_]{0,31})(?![\w/])/g;
  for (const node of nodes) {
    const text = node.textContent ?? '';
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      if (!names.has(match[2])) continue;
      const start = match.index + match[1].length;
      parts.push(document.createTextNode(text.slice(last, start)));
      const chip = document.createElement('button');
      chip.type = 'button';
      chip.className = 'cmd';
      chip.dataset.command = `/${match[2]}`;
      chip.textContent = `/${match[2]}`;
      parts.push(chip);
      last = start + match[2].length + 1;
    }
    if (parts.length === 0) continue;
    parts.push(document.createTextNode(text.slice(last)));
    node.replaceWith(...parts);
  }
}

function fileLine(label, bytes) {
  const line = document.createElement('div');
  line.className = 'attachment';
  line.textContent = `${label} (${size(bytes)})`;
  return line;
}

export function size(bytes) {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} B`;
}

/** The command list under the message box, filtered by what was typed after "/". */
export function drawMenu(list, commands, typed, pick) {
  list.replaceChildren();
  const word = typed.startsWith('/') ? typed.slice(1).split(/\s/)[0].toLowerCase() : '';
  const shown = commands.filter((entry) => entry.command.startsWith(word)).slice(0, 50);
  for (const entry of shown) {
    const item = document.createElement('li');
    item.setAttribute('role', 'option');
    const name = document.createElement('strong');
    name.textContent = `/${entry.command}`;
    const about = document.createElement('span');
    about.textContent = ` ${entry.description}`;
    item.append(name, about);
    item.addEventListener('mousedown', (event) => {
      event.preventDefault();
      pick(entry.command);
    });
    list.append(item);
  }
  list.hidden = shown.length === 0;
}

/** A short notice that goes away by itself. */
export function toast(container, text, kind = 'notice') {
  const note = document.createElement('div');
  note.className = `toast ${kind}`;
  note.textContent = text;
  container.append(note);
  setTimeout(() => note.remove(), 6000);
}
