/**
 * A fetch that sends a request's text body as UTF-8 bytes. The model SDKs hand fetch the
 * request as one JSON string (~13 KB with hob's tool schemas and system prompt). Given a
 * string, Node's fetch first copies it whole (`toWellFormed`), and as soon as the string holds
 * one character beyond Latin-1 (a dash, an emoji, any non-Latin script) that copy takes two
 * bytes a character: ~30 KB a request that outlived the young generation and only a full
 * collection freed, a third of what each message left in the old generation. Bytes are
 * encoded once and held outside the JavaScript heap. The body sent is the same.
 */
export function bytesBodyFetch(inner: typeof globalThis.fetch = globalThis.fetch): typeof globalThis.fetch {
  return (input, init) => (typeof init?.body === 'string' ? inner(input, { ...init, body: Buffer.from(init.body, 'utf8') }) : inner(input, init));
}
