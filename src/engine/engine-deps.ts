/**
 * What an engine is given: once per process (`EngineDeps`, shared by every conversation) and
 * with each message (`SubmitOptions`). `RunProfile` names the part of the deps a run is made
 * of — model, tools, gates, limits — so a run with other ones (a worker) can bring its own.
 */
import type { Message, Usage } from '../core/messages.js';
import type { PersonResolver } from '../core/person.js';
import type { Interaction } from '../policy/types.js';
import type { ProviderClient } from '../providers/types.js';
import type { ConversationRepository } from '../store/conversations.js';
import type { ToolContext, ToolSet } from '../tools/tool.js';
import type { TokenCalibrations } from './compaction/calibration.js';
import type { ModelWindow } from './model-window.js';
import type { HookGate, PermissionGate } from './ports.js';

/** What every engine of one hob process shares. */
export type EngineDeps = {
  provider: ProviderClient;
  tools: ToolSet;
  permissions: PermissionGate;
  hooks: HookGate;
  conversations: ConversationRepository;
  /** Built once per submitted message (carries the current time); leaner for a small `contextWindow`. */
  systemPrompt(context: { sessionKey: string; userId: string; interactive: boolean; sessionId: string; chatType?: SubmitOptions['chatType']; contextWindow: number }): string;
  /** When given, each message from the person is stored starting with `[<sentAt()>]` (in their timezone). */
  sentAt?(context: { sessionKey: string; userId: string }): string;
  /** Sees each message the person sends (memory's fact extraction); must not throw or block. */
  observe?(context: { sessionKey: string; userId: string }, text: string): void;
  costUsd(model: string, usage: Usage): number;
  workspace: string;
  maxTurns: number;
  maxTokens: number;
  approvalTimeoutSeconds: number;
  /** `model.context_window`; without it, `windows` or the known window of the model in use. */
  contextWindow?: number;
  /** Each model's window, asked of its server once (shared by every conversation). */
  windows?: ModelWindow;
  /** Each model's token-count calibration (shared, and kept when it has a store). */
  calibrations?: TokenCalibrations;
  /** Head room kept below the window besides max_tokens; default min(13,000, window / 10). */
  compactionBufferTokens?: number;
  /** Who a platform identity belongs to: sessions and their search are the person's. */
  people?: PersonResolver;
  /**
   * Notes hob itself adds to a conversation (a background task of theirs ended), stored at
   * the start of the person's next message and marked as hob's, never as their words.
   * `taken` is called once they are stored. Must not throw.
   */
  notes?(sessionKey: string): { texts: string[]; taken(): void } | undefined;
};

/** What a run is made of besides its session and its message: which model, which tools and gates, which limits. */
export type RunProfile = Pick<EngineDeps, 'provider' | 'tools' | 'permissions' | 'hooks' | 'workspace' | 'maxTurns' | 'maxTokens' | 'approvalTimeoutSeconds'>;

export type SubmitOptions = {
  userId: string;
  interaction: Interaction;
  signal: AbortSignal;
  /** False for headless runs: the prompt then says nobody can approve. */
  interactive?: boolean;
  sendFile?: ToolContext['sendFile'];
  /** Where the message came from: a group gets no personal memory snapshot when shared. */
  chatType?: 'dm' | 'group' | 'channel';
  /** The conversation is a group chat (tools then keep the person's private data out). */
  inGroup?: boolean;
  /** The chat the run answers in (background tasks deliver there). */
  chat?: ToolContext['chat'];
  /**
   * Wraps the write that stores the run's answer (its last message, one without tool calls):
   * the caller runs `store` exactly once, inside a transaction of its own with what it records
   * alongside (the gateway: the answer's outbox rows), so both commit at once and a crash
   * cannot leave an answer that is stored but never sent. What it throws fails the run as a
   * failed write would. Without it the answer is stored on its own.
   */
  storingAnswer?(answer: Message, store: () => void): void;
};
