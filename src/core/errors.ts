/** Typed errors by cause. One retry policy (providers/retry.ts) decides by these types. */

export class HobError extends Error {
  override name = 'HobError';
}

/** The model endpoint failed. `retryable` is computed from the status or the network cause. */
export class ProviderError extends HobError {
  override name = 'ProviderError';
  constructor(
    message: string,
    readonly options: {
      status?: number;
      retryable: boolean;
      retryAfterMs?: number;
      cause?: unknown;
    },
  ) {
    super(message, { cause: options.cause });
  }
  get retryable(): boolean {
    return this.options.retryable;
  }
  get retryAfterMs(): number | undefined {
    return this.options.retryAfterMs;
  }
  get status(): number | undefined {
    return this.options.status;
  }
}

/** What a server said about a prompt it refused as too long; each figure only when it said so. */
export type WindowFigures = {
  /** The prompt as the server counted it, in its own tokens. */
  promptTokens?: number;
  /** The window the server runs. */
  contextWindow?: number;
};

/** The request did not fit the model's context window. Compaction may recover from it. */
export class PromptTooLongError extends ProviderError {
  override name = 'PromptTooLongError';
  constructor(
    message: string,
    cause?: unknown,
    readonly figures: WindowFigures = {},
  ) {
    super(message, { status: 400, retryable: false, cause });
  }
}

/** A tool was called with input that does not match its schema. Phrased for the model. */
export class ToolInputError extends HobError {
  override name = 'ToolInputError';
}

/** A mistake the person can fix (config, missing key). Shown without a stack trace. */
export class UserFacingError extends HobError {
  override name = 'UserFacingError';
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

export function isAbortError(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'AbortError' || error.name === 'APIUserAbortError' || error.message === 'aborted')
  );
}
