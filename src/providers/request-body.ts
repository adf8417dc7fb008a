import type { ToolSpec } from './types.js';

const COMMA = 0x2c;
/** The body's type, which the SDKs need to send bytes as they are given. */
export const JSON_TYPE = { 'content-type': 'application/json' } as const;

/**
 * A model request's body as the UTF-8 bytes of its JSON, its tool definitions encoded once per
 * list of them.
 *
 * The definitions are most of a request (25 built-in tools: ~13 of its ~16 KB) and the same
 * from one request to the next: the tool menu hands out the same list until the tools or the
 * window change (engine/tool-menu.ts), and a provider makes the same wire form of a definition
 * every time. Serialized by the SDK with the rest, they cost ~30 µs a request and, with the
 * string's copy in bytes, ~45 KB of young garbage, which in a burst of new people outlives a
 * scavenge or two while the requests are in flight. Here only the rest (the system prompt and
 * the messages) is serialized per request, and the body is one buffer outside V8's heap. The
 * SDKs send bytes given as the body as they are (their `RequestOptions.body`, with its content
 * type: `options`), and core/lean-fetch.ts writes them in one piece.
 */
export class RequestBody {
  /** By the list of definitions the wire forms were made from: those wire forms' JSON, as bytes. */
  private readonly toolsByList = new WeakMap<readonly ToolSpec[], Buffer>();

  /** An SDK request's options that send `params` as these bytes instead of the SDK serializing them again. */
  options(params: object & { tools?: unknown }, specs: readonly ToolSpec[]): { body: Buffer; headers: typeof JSON_TYPE } {
    return { body: this.bytes(params, specs), headers: JSON_TYPE };
  }

  /** `params` as JSON bytes; its `tools`, made from `specs` by this provider, encoded at their first request. */
  bytes(params: object & { tools?: unknown }, specs: readonly ToolSpec[]): Buffer {
    const { tools, ...rest } = params;
    if (tools === undefined) return Buffer.from(JSON.stringify(params), 'utf8');
    let toolsBytes = this.toolsByList.get(specs);
    if (toolsBytes === undefined) {
      toolsBytes = Buffer.from(`"tools":${JSON.stringify(tools)}}`, 'utf8');
      this.toolsByList.set(specs, toolsBytes);
    }
    // `{…rest…}`, its closing brace made a comma (or dropped, when it is empty), then `"tools":[…]}`.
    const head = JSON.stringify(rest);
    const headBytes = Buffer.byteLength(head, 'utf8');
    const empty = head.length === 2;
    const body = Buffer.allocUnsafe(headBytes - (empty ? 1 : 0) + toolsBytes.length);
    body.write(head, 0, 'utf8');
    if (!empty) body[headBytes - 1] = COMMA;
    toolsBytes.copy(body, empty ? 1 : headBytes);
    return body;
  }
}
