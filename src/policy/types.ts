/** What a run asks its human. The gateway answers with buttons, the console with y/a/n. */

export type ApprovalRequest = {
  /** Set by whoever records the request (the broker); empty before that. */
  id: string;
  sessionKey: string;
  /** The model's tool_use id this approval is for. */
  toolUseId: string;
  /** The person whose message started the run; only they (or an owner) may decide. */
  requesterId: string;
  toolName: string;
  input: unknown;
  /** The full command or path, never truncated. */
  summary: string;
  /** Why hob asks (the permission checker's reason). */
  reason: string;
  /** The worker (an `agent` call) that wants to run it; the prompt names it. Bound to the same requester. */
  worker?: string;
};

export type Decision = 'allow_once' | 'allow_always' | 'deny' | 'timeout';

export interface Interaction {
  /** Must not throw; an abort resolves to 'deny'. */
  confirm(request: ApprovalRequest, signal: AbortSignal): Promise<Decision>;
  /** Ask a question with options; the answer is one option or free text. */
  choose(question: string, options: string[], signal: AbortSignal): Promise<string>;
  /**
   * issue 7: false when the person who started the run is not on allow_from (a member of an
   * allowed group only): full_auto does not apply to them. Unset means trusted.
   */
  trusted?: boolean;
}

/** For headless runs (schedules, `hob ask` without --yes): never asks, always denies. */
export const denyingInteraction: Interaction = {
  confirm: async () => 'deny',
  choose: async () => '(nobody is here to answer; continue without an answer)',
};

export type PermissionBehavior = 'allow' | 'deny' | 'ask';
export type PermissionDecision = { behavior: PermissionBehavior; reason: string };

/** What the permission checker needs to know about one tool call. */
export type PermissionQuery = {
  toolName: string;
  readOnly: boolean;
  /** Absolute or workspace-relative path the call touches, if any. */
  path?: string;
  /** Shell command the call runs, if any. */
  command?: string;
  /** The person asking; `always` rules are stored per person. */
  userId?: string;
  /** false: not on allow_from, so full_auto does not apply (see Interaction.trusted). */
  trusted?: boolean;
};
