/**
 * How many tokens a model reads: known for the hosted Claude and GPT models; asked of the
 * server for everything else (window-discovery.ts), since a local server runs the window it
 * was started with, often far below what the model could do.
 */

/** Where a window figure came from, for `hob doctor` and the log. */
export type WindowSource = 'config' | 'known' | 'ollama' | 'llama.cpp' | 'vllm' | 'lm-studio' | 'openrouter' | 'server' | 'default';

export type WindowInfo = {
  tokens: number;
  source: WindowSource;
  /** Where exactly, in words: "Ollama /api/ps (the loaded model)". */
  detail: string;
  /** What the model could do, when the server runs less. */
  modelMax?: number;
  /** How to give the model a larger window on this server. */
  fix?: string;
};

/** Context windows of common models, by name prefix (longest prefix wins). */
const KNOWN_WINDOWS: Array<[prefix: string, tokens: number]> = [
  ['claude-', 200_000],
  ['gpt-4.1', 1_047_576],
  ['gpt-5', 400_000],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
];

/** Used for a model hob does not know when its server says nothing either. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** The known window of a hosted model ("openai/gpt-4o" on a router counts as gpt-4o). */
export function knownWindow(model: string): number | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  const match = KNOWN_WINDOWS.filter(([prefix]) => name.startsWith(prefix)).sort((a, b) => b[0].length - a[0].length)[0];
  return match?.[1];
}

/** The window without asking a server: configured, known, or the default. */
export function staticWindow(model: string, configured?: number): WindowInfo {
  if (configured) return { tokens: configured, source: 'config', detail: 'model.context_window' };
  const known = knownWindow(model);
  if (known) return { tokens: known, source: 'known', detail: `hob's table of known models` };
  return { tokens: DEFAULT_CONTEXT_WINDOW, source: 'default', detail: 'not known and not reported by the server; set model.context_window' };
}
