/**
 * `denied_commands` globs. Shell commands are not paths, so picomatch's path semantics
 * (`*` stops at `/`) would let `rm -rf *` miss `rm -rf /`. Here `*` matches anything
 * (slashes and spaces included), `?` one character, everything else literally; the match
 * covers the whole (simple) command, case-sensitively, with runs of blanks collapsed.
 */

export type CommandPattern = { pattern: string; test(command: string): boolean };

export function compileCommandPattern(pattern: string): CommandPattern {
  const body = [...collapseBlanks(pattern)]
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\/]/g, '\\$&')))
    .join('');
  const regex = new RegExp(`^${body}$`, 's');
  return { pattern, test: (command) => regex.test(command) };
}

/** Leading words that run another command: `sudo rm -rf /` is still `rm -rf /`. */
const WRAPPERS = new Set(['sudo', 'doas', 'env', 'nohup', 'time', 'nice', 'command', 'exec', 'builtin']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=\S*$/;

/**
 * Everything a denied pattern is tried against: the whole command, each simple command
 * (split on `;` `&&` `||` `|` `&`, newlines, subshell parentheses, `$(` and backticks), and
 * each simple command without leading `VAR=value` assignments and wrapper words. Splitting
 * ignores quoting, which can only add candidates — a quoted `;` may cause a denial, never
 * an escape. Best effort: `sh -c "…"`, `eval` and encodings are not unpacked.
 */
export function commandCandidates(command: string): string[] {
  const candidates = new Set<string>();
  const whole = collapseBlanks(command);
  if (whole) candidates.add(whole);
  for (const part of command.split(/\$\(|&&|\|\||[;|&\n()`]/)) {
    const simple = collapseBlanks(part);
    if (!simple) continue;
    candidates.add(simple);
    const words = simple.split(' ');
    let start = 0;
    while (start < words.length && (ASSIGNMENT.test(words[start] ?? '') || WRAPPERS.has(words[start] ?? ''))) start++;
    const unwrapped = words.slice(start).join(' ');
    if (unwrapped) candidates.add(unwrapped);
  }
  return [...candidates];
}

function collapseBlanks(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}
