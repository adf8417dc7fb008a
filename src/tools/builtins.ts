import type { AnyTool } from './tool.js';
import type { Sandbox } from '../policy/sandbox.js';
import { withoutSecrets } from '../policy/child-env.js';
import { bashTool } from './bash.js';
import { editFileTool } from './edit-file.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { readFileTool } from './read-file.js';
import { webFetchTool } from './web-fetch.js';
import type { WebFetchOptions } from './web-fetch.js';
import { writeFileTool } from './write-file.js';
import { askUserTool } from './ask-user.js';
import { sendFileTool } from './send-file.js';

/**
 * What configuration may set. The web_fetch test-only allowlist is deliberately absent, and
 * fields are copied one by one below, so no config object can smuggle it in.
 */
export type BuiltinToolsOptions = {
  bashTimeoutSeconds?: number;
  webFetch?: Pick<WebFetchOptions, 'maxBytes' | 'timeoutMs' | 'maxRedirects' | 'userAgent'>;
  /** issue 7: bubblewrap around bash. */
  sandbox?: Sandbox;
  /** The chat channels' secret variables, kept from bash as well (see child-env.ts). */
  secretEnv?: readonly string[];
};

/** The built-in tools, in the order the model sees them. */
export function builtinTools(options: BuiltinToolsOptions = {}): AnyTool[] {
  const web = options.webFetch ?? {};
  const tools = [
    bashTool({ defaultTimeoutSeconds: options.bashTimeoutSeconds, env: withoutSecrets(process.env, options.secretEnv), sandbox: options.sandbox }),
    readFileTool,
    writeFileTool,
    editFileTool,
    globTool,
    grepTool(),
    webFetchTool({
      maxBytes: web.maxBytes,
      timeoutMs: web.timeoutMs,
      maxRedirects: web.maxRedirects,
      userAgent: web.userAgent,
    }),
    askUserTool,
    sendFileTool,
  ];
  // Each tool's run() takes its own parsed input; the registry only ever calls it with that.
  return tools as unknown as AnyTool[];
}

