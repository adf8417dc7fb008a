/**
 * A channel describes itself. Each `adapters/<platform>/index.ts` exports one ChannelModule:
 * everything hob's config, CLI, doctor, policy and gateway need to know about that platform.
 * The list of modules (the registry, adapters/index.ts) is read by the CLI only and handed to
 * the rest, so nothing under src/ names a platform and adding a channel is one folder and one
 * line.
 *
 * A module file stays light: every hob command reads the whole registry (the secrets of a
 * channel that is not configured must still be kept from bash), so a module's SDK, its adapter
 * and its doctor checks load only when used (dynamic imports inside `create` and `doctor`).
 */
import type { z } from 'zod';
import type { Check } from '../core/check.js';
import type { ChannelAdapter, ChannelCapabilities, ChatType } from './channel.js';

/** Per platform: who may talk to hob. The first `allowFrom` entry is the owner. */
export type ChannelAccess = { allowFrom: string[]; allowedGroups: string[] };

/** The slice of hob's logger a channel uses (a pino child tagged with the platform). */
export type ChannelLogger = {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
};

/** What hob hands a channel when it creates its adapter. */
export type ChannelContext = {
  logger: ChannelLogger;
  /** hob's data directory; a channel that keeps files of its own keeps them in `<dataDir>/<name>/`. */
  dataDir: string;
  /** Tells the person running hob something they must act on now (printed on stderr). Must not throw. */
  notice(sentence: string): void;
};

/**
 * A channel whose updates only one process may receive at a time with this config (one long
 * poll per bot: a second poller cuts off the first). `key` names what they would share (the
 * bot, never its secret); `refusal` is the sentence a second process prints instead of starting
 * the channel, naming the mode that works from several processes.
 */
export type SingleConsumer = { key: string; refusal: string };

/** What `hob doctor` hands a channel's checks. */
export type ChannelDoctorContext = {
  /** The fetch to reach the platform with (tests pass one; `hob doctor` the global one). */
  fetch: typeof fetch;
  /** How a token is shown ("123…9z"): never print one whole. */
  mask(secret: string): string;
};

/** What a channel's terminal command is run with. */
export type ChannelCliContext<Config> = {
  /** The channel's parsed config section; undefined when the config has none. */
  config: Config | undefined;
  dataDir: string;
  /** Writes one line to stdout (the newline is added). */
  out(line: string): void;
};

/** `hob <command> <name> [options]`: one subcommand of a channel's terminal command. */
export type ChannelCliCommand<Config> = {
  name: string;
  description: string;
  /** Commander-style flags, e.g. `--as <id>`; values arrive in `run`'s options by their camel-cased long name. */
  options: { flags: string; description: string }[];
  /** Throws UserFacingError for a mistake the person can fix (the CLI prints it and exits 1). */
  run(options: Record<string, string | boolean | undefined>, context: ChannelCliContext<Config>): Promise<void>;
};

/** A terminal command a channel adds to `hob` (`hob <command> <subcommand>`). */
export type ChannelCli<Config> = { command: string; description: string; subcommands: ChannelCliCommand<Config>[] };

/**
 * A slash command a channel answers in any platform's chat (a sign-in link, say). The gateway
 * lists it in the menus, runs it once per update and refuses non-owners in its usual words
 * when `ownerOnly`. A name hob's own commands use stays hob's.
 */
export type ChannelChatCommand = {
  command: string;
  description: string;
  ownerOnly: boolean;
  /** Answers with a secret, so only in a direct chat (the gateway says so elsewhere; `run` checks again). */
  directOnly: boolean;
  /** The reply (plain text). Must not throw: failures come back as words. */
  run(args: string, context: { platform: string; userId: string; chatType: ChatType }): Promise<string>;
};

/**
 * One chat platform, as hob's parts see it. `Config` is the parsed `channels.<name>` section.
 * Its functions are methods so that a module of any Config fits the registry's
 * `ChannelModule[]` (each is only ever called with the section its own schema parsed).
 */
export interface ChannelModule<Config = unknown> {
  /** The platform id: the config key under `channels`, the first part of session keys (`<name>:42`), `--platform`. */
  readonly name: string;
  /** How people name it, for the system prompt and messages ("Telegram"). */
  readonly label: string;
  /**
   * The `channels.<name>` section: strict keys, messages phrased "expected …" as the rest of the
   * config. Made with `z.lazy`, it is built only when a config writes the section: every start
   * reads the whole registry, and most configure one or two of its channels.
   */
  readonly configSchema: z.ZodType<Config>;
  /** What the platform allows, known before its SDK loads (the gateway reads it while the adapter loads). */
  readonly capabilities: ChannelCapabilities;
  /**
   * Environment variables that may carry this channel's credentials, never passed to a process
   * hob starts (bash, hooks): exact names, or a prefix ending in `*` (`TELEGRAM_*`).
   */
  readonly secretEnv: readonly string[];
  /** Who may talk to hob here, from the section. */
  access(config: Config): ChannelAccess;
  /** The adapter, its SDK loaded on demand; it connects on `start`. Throws with words to fix the config. */
  create(config: Config, context: ChannelContext): Promise<ChannelAdapter>;
  /** `hob doctor`'s lines for this channel: its tokens work, the platform answers, what to fix. Must not throw. */
  doctor(config: Config, context: ChannelDoctorContext): Promise<Check[]>;
  /**
   * Set when only one process may receive this channel's updates with `config`: with a shared
   * database, `hob start` holds a lock on `key` while the channel runs and refuses the channel
   * in a second process with `refusal`. Undefined (or absent): any number of processes may.
   */
  singleConsumer?(config: Config): SingleConsumer | undefined;
  /** Terminal commands the channel adds (`hob <command> …`). */
  readonly cli?: ChannelCli<Config>;
  /** Chat commands the channel adds, answered on every platform. */
  chatCommands?(config: Config, context: { dataDir: string }): ChannelChatCommand[];
}
