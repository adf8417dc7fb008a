// The esbuild plugins scripts/build.mjs bundles hob with: each changes how a library is
// bundled, never what hob's own code does. A library whose file no longer reads as expected
// (a newer version) is bundled as it is; laterLibraryParts says so as a build warning.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

// zod's API re-exports every locale (`z.locales`: 60+ languages, ~340 KB of source) as a
// namespace, which a bundler cannot shake out, so each start compiled them all. hob's messages
// are zod's default English: the namespace holds only that one.
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${sep}zod${sep}`) ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-locales' } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
  },
};

// zod declares each of its ~175 schema kinds as `$constructor(name, (inst, def) => {...})`. V8
// parses an arrow function in a call's arguments in full, where it only pre-parses a
// `function` (and compiles it on its first call): zod's chunk compiled at ~160 ms/MB against
// ~25 for the rest of dist/, ~7 ms of each start for kinds hob never builds. The initializers
// are called plainly (`initializer(inst, def)`) in strict code and use neither `this` nor
// `arguments`, so the two forms behave alike.
export const zodLazyInitializers = {
  name: 'zod-lazy-initializers',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/](core|classic)[\\/][a-z-]+\.js$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replaceAll('(inst, def) => {', 'function (inst, def) {'),
      loader: 'js',
    }));
  },
};

// fdir (tinyglobby's crawler, for the glob tool) looks for picomatch with a runtime require()
// when its module is evaluated, for a `.glob()` hob never calls (tinyglobby matches on its own):
// node resolved picomatch in node_modules and compiled a second copy of it at each start. It
// takes the bundled copy instead.
export const fdirBundledPicomatch = {
  name: 'fdir-bundled-picomatch',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]node_modules[\\/]fdir[\\/]dist[\\/]index\.mjs$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const lookup = '__require.resolve("picomatch");\n\tpm = __require("picomatch");';
      // A newer fdir that looks for it otherwise is bundled as it is.
      if (!source.includes(lookup)) return undefined;
      return { contents: `import __bundledPicomatch from 'picomatch';\n${source.replace(lookup, 'pm = __bundledPicomatch;')}`, loader: 'js' };
    });
  },
};

/**
 * The channel libraries that are CommonJS, each wrapped for hob's modules once. A module of
 * the bundle that imports a CommonJS package gets a namespace of its own, every export of the
 * package copied into it as a getter (esbuild's `__toESM`): discord.js has ~700, and the eight
 * files of hob's Discord adapter that import it made eight copies (~8 ms of a cold start's main
 * thread). hob's own imports of these packages go through one module of re-exports instead,
 * which copies them once. Only named imports pass through `export *` (no default), which is
 * all hob takes from these three.
 */
const WRAPPED_ONCE = /^(discord\.js|grammy|@slack\/bolt)$/;

export const oneWrapPerLibrary = {
  name: 'one-wrap-per-library',
  setup(builder) {
    builder.onResolve({ filter: WRAPPED_ONCE }, (args) =>
      args.namespace === 'wrapped-once' || args.importer.includes(`${sep}node_modules${sep}`) ? undefined : { path: args.path, namespace: 'wrapped-once' },
    );
    builder.onLoad({ filter: /.*/, namespace: 'wrapped-once' }, (args) => ({ contents: `export * from ${JSON.stringify(args.path)};`, resolveDir: process.cwd() }));
  },
};

/**
 * One copy of each package version. npm nests a package under each dependent that cannot share
 * the top-level copy: discord.js and @discordjs/rest each hold their own undici 6.29.1 (the top
 * level is Slack's 7), so dist/ carried the same 900 KB twice. Every file of a nested copy is
 * taken from the first copy of the same name and version (sorted by path, so each build comes
 * out the same): same version, same files.
 */
export function onePackageCopy(root = process.cwd()) {
  /** A package folder → the folder of the copy read in its place. */
  const canonical = new Map();
  const byVersion = new Map();
  const visit = (modules) => {
    let names;
    try {
      names = readdirSync(modules);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const folders = name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => join(modules, name, inner)) : [join(modules, name)];
      for (const folder of folders) {
        let version;
        try {
          version = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).version;
        } catch {
          continue;
        }
        const key = `${relative(modules, folder)}@${version}`;
        if (byVersion.has(key)) byVersion.get(key).push(folder);
        else byVersion.set(key, [folder]);
        visit(join(folder, 'node_modules'));
      }
    }
  };
  visit(join(root, 'node_modules'));
  for (const folders of byVersion.values()) {
    const [first, ...others] = [...folders].sort();
    for (const folder of others) canonical.set(folder + sep, first + sep);
  }
  return {
    name: 'one-package-copy',
    setup(builder) {
      if (canonical.size === 0) return;
      builder.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData?.onePackageCopy || !args.importer.includes(`${sep}node_modules${sep}`)) return undefined;
        const resolved = await builder.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { onePackageCopy: true } });
        if (resolved.errors.length > 0 || resolved.external) return undefined;
        for (const [folder, first] of canonical) {
          if (resolved.path.startsWith(folder)) return { path: first + resolved.path.slice(folder.length), namespace: resolved.namespace, sideEffects: resolved.sideEffects };
        }
        return undefined;
      });
    },
  };
}

/**
 * What Slack's Socket Mode takes from undici 7, each part required from its own file when first
 * used. Its `require("undici")` ran undici's index, which requires every dispatcher, the mock
 * agents, the caches, the interceptors and fetch's cookies, and the cookies' check of
 * `globalThis.Headers` loaded Node's own copy of undici besides (which hob's calls, through
 * core/lean-fetch.ts, never need): ~40 ms of a cold start's main thread before Slack's socket
 * opened, for the WebSocket, its events, an Agent and its connector. `fetch` (with a proxy's
 * dispatcher only) still takes the whole index.
 */
const SOCKET_MODE_UNDICI = `{
  get WebSocket() { return require("undici/lib/web/websocket/websocket").WebSocket; },
  ping: (...args) => require("undici/lib/web/websocket/websocket").ping(...args),
  get CloseEvent() { return require("undici/lib/web/websocket/events").CloseEvent; },
  get ErrorEvent() { return require("undici/lib/web/websocket/events").ErrorEvent; },
  get MessageEvent() { return require("undici/lib/web/websocket/events").MessageEvent; },
  get Agent() { return require("undici/lib/dispatcher/agent"); },
  get buildConnector() { return require("undici/lib/core/connect"); },
  get fetch() { return require("undici").fetch; },
}`;

/**
 * Parts of the channel libraries evaluated only when first used instead of when their library
 * loads. A bundled CommonJS module runs its top level on its first require(), so each
 * require() moved into the getter or function that needs it leaves that module (and all it
 * requires) out of `hob start` until then:
 * - Bolt's Express and AWS Lambda receivers (express, body-parser, iconv-lite, send, …):
 *   hob receives over Socket Mode or Bolt's own HTTPReceiver, which App requires itself;
 * - Bolt's raw-body (reads an HTTP request's body: HTTP mode's, on its first event) and
 *   @slack/oauth's jsonwebtoken (OAuth's state parameter, which hob's installs never use);
 * - discord.js's magic-bytes.js (a file's type, for an upload sent without one) and its undici 6
 *   (its REST client's default request, the `fetch` of two helpers; and its `FormData` put on
 *   globalThis where there is none, which Node 18 and later always have):
 *   hob's Discord REST calls go through its own `makeRequest` (core/lean-fetch.ts), so the
 *   copy loads only for what still uses it (fetching a file by URL);
 * - grammy's node-fetch (with whatwg-url and tr46's 260 KB table): hob gives grammy its own
 *   fetch (core/lean-fetch.ts), so node-fetch loads only to fetch an InputFile given by URL;
 * - the copy of util.inspect for browsers (node-inspect-extracted, 2,000 lines) that
 *   discord.js's event emitter carries to word an unhandled 'error' event;
 * - all of undici 7 but its WebSocket, for Socket Mode (SOCKET_MODE_UNDICI), and its HTTP/2
 *   client with Node's http2 (Socket Mode pins HTTP/1.1);
 * - @discordjs/builders (ts-mixer, @sapphire/shapeshift's validators, lodash's pieces) and
 *   discord.js's own builders: hob sends components as plain JSON, and discord.js's Client
 *   reached them only through an embed's length (Embed.js) and a component's builder
 *   (Components.js), while its index re-exported them all (lazyBuilders).
 */
/**
 * discord.js's index with its builders as getters: each `exports.XBuilder = require(…)` and the
 * names it re-exports from @discordjs/builders (read from the package at build time), defined
 * when first read. Undefined when the index no longer reads so.
 */
function lazyBuildersInIndex(source, path) {
  const reExport = "__exportStar(require('@discordjs/builders'), exports);";
  const own = /^exports\.(\w+Builder) = require\('(\.\/structures\/\w+Builder)'\);$/gm;
  if (!source.includes(reExport) || !own.test(source)) return undefined;
  const names = Object.keys(createRequire(path)('@discordjs/builders')).filter((name) => name !== 'default');
  const lazy = (name, module) => `Object.defineProperty(exports, ${JSON.stringify(name)}, { enumerable: true, configurable: true, get: () => require(${JSON.stringify(module)})${module.startsWith('.') ? '' : `[${JSON.stringify(name)}]`} });`;
  return source
    .replace(own, (_line, name, module) => lazy(name, module))
    .replace(reExport, names.map((name) => `if (!Object.prototype.hasOwnProperty.call(exports, ${JSON.stringify(name)})) ${lazy(name, '@discordjs/builders')}`).join('\n'));
}

/**
 * discord.js's Components.js with its builders required when a builder is made from a
 * component (`createComponentBuilder`), not when the file loads (Message.js loads it).
 */
function lazyBuildersInComponents(source) {
  const head = "const { ComponentBuilder } = require('@discordjs/builders');";
  const use = 'return data instanceof ComponentBuilder ? data : new (ComponentTypeToBuilder[data.type] ?? ComponentBuilder)(data);';
  const required = /^const (\w+Builder) = require\('(\.\.\/structures\/\w+Builder)'\);\n/gm;
  const map = /const ComponentTypeToBuilder = \{\n([^}]*)\};/;
  if (!source.includes(head) || !source.includes(use) || !map.test(source)) return undefined;
  const modules = new Map([...source.matchAll(required)].map(([, name, module]) => [name, module]));
  let complete = true;
  const entries = (map.exec(source)?.[1] ?? '').replace(/^(\s*)(\[ComponentType\.\w+\]): (\w+),$/gm, (_line, indent, key, name) => {
    if (!modules.has(name)) complete = false;
    return `${indent}get ${key}() { return require(${JSON.stringify(modules.get(name))}); },`;
  });
  if (!complete || modules.size === 0) return undefined;
  return source
    .replace(head, "const builders = () => require('@discordjs/builders');")
    .replace(use, 'const { ComponentBuilder } = builders();\n  return data instanceof ComponentBuilder ? data : new (ComponentTypeToBuilder[data.type] ?? ComponentBuilder)(data);')
    .replace(required, '')
    .replace(map, `const ComponentTypeToBuilder = {\n${entries}};`);
}

const LATER = [
  {
    file: /[\\/]@slack[\\/]bolt[\\/]dist[\\/]index\.js$/,
    replace: ['AwsLambdaReceiver', 'ExpressReceiver'].map((name) => [
      `const ${name}_1 = __importDefault(require("./receivers/${name}"));\nexports.${name} = ${name}_1.default;`,
      `Object.defineProperty(exports, "${name}", { enumerable: true, get: () => __importDefault(require("./receivers/${name}")).default });`,
    ]),
  },
  {
    file: /[\\/]@discordjs[\\/]rest[\\/]dist[\\/]index\.js$/,
    replace: [
      ...['import_undici', 'import_undici2'].map((name) => [`var ${name} = require("undici");`, `var ${name} = new Proxy({}, { get: (_, key) => require("undici")[key] });`]),
      ['var import_magic_bytes = require("magic-bytes.js");', 'var import_magic_bytes = new Proxy({}, { get: (_, key) => require("magic-bytes.js")[key] });'],
      // Node 18 and later define FormData; reading the global loaded Node's own undici at start.
      ['globalThis.FormData ??= import_undici2.FormData;', ''],
    ],
  },
  {
    file: /[\\/]@slack[\\/]socket-mode[\\/]dist[\\/]src[\\/](SlackWebSocket|SocketModeClient)\.js$/,
    replace: [['const undici_1 = require("undici");', `const undici_1 = ${SOCKET_MODE_UNDICI};`]],
  },
  {
    // Its HTTP/2 client, with Node's http2 (~3 ms of Socket Mode's start): only for an origin that offers h2.
    file: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/,
    replace: [["const connectH2 = require('./client-h2.js')", "const connectH2 = (...args) => require('./client-h2.js')(...args)"]],
  },
  {
    file: /[\\/]@slack[\\/]bolt[\\/]dist[\\/]receivers[\\/]HTTPModuleFunctions\.js$/,
    replace: [['const raw_body_1 = __importDefault(require("raw-body"));', 'const raw_body_1 = { get default() { return __importDefault(require("raw-body")).default; } };']],
  },
  {
    file: /[\\/]@slack[\\/]oauth[\\/]dist[\\/]state-stores[\\/]clear-state-store\.js$/,
    replace: [['const jsonwebtoken_1 = require("jsonwebtoken");', 'const jsonwebtoken_1 = new Proxy({}, { get: (_, key) => require("jsonwebtoken")[key] });']],
  },
  {
    file: /[\\/]grammy[\\/]out[\\/](shim|types)\.node\.js$/,
    replace: [[/(var|const) node_fetch_1 = require\("node-fetch"\);/, '$1 node_fetch_1 = { get default() { return require("node-fetch").default; } };']],
  },
  {
    file: /[\\/]@vladfrangu[\\/]async_event_emitter[\\/]dist[\\/]index\.cjs$/,
    replace: [[/var import_inspect = __toESM\(require_inspect\(\), 1\);\nvar \{[^}]*\} = import_inspect\.default;/, 'var inspect = (...args) => __toESM(require_inspect(), 1).default.inspect(...args);']],
  },
  {
    file: /[\\/]discord\.js[\\/]src[\\/]index\.js$/,
    transform: lazyBuildersInIndex,
  },
  {
    file: /[\\/]discord\.js[\\/]src[\\/]structures[\\/]Embed\.js$/,
    replace: [["const { embedLength } = require('@discordjs/builders');", "const embedLength = (...args) => require('@discordjs/builders').embedLength(...args);"]],
  },
  {
    file: /[\\/]discord\.js[\\/]src[\\/]util[\\/]Components\.js$/,
    transform: lazyBuildersInComponents,
  },
  {
    file: /[\\/]discord\.js[\\/]src[\\/]util[\\/](Util|DataResolver)\.js$/,
    replace: [["const { fetch } = require('undici');", "const fetch = (...args) => require('undici').fetch(...args);"]],
  },
];

export const laterLibraryParts = {
  name: 'later-library-parts',
  setup(builder) {
    for (const { file, replace, transform } of LATER) {
      builder.onLoad({ filter: file }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        const changed = transform ? transform(source, args.path) : replace.every(([from]) => (typeof from === 'string' ? source.includes(from) : from.test(source))) ? replace.reduce((text, [from, to]) => text.replace(from, to), source) : undefined;
        if (changed === undefined) {
          // A newer version: bundled as it is (the part loads at start again), and said.
          const text = `${relative(process.cwd(), args.path)} no longer reads as scripts/bundle-plugins.mjs expects: bundled as it is, its parts load at start`;
          return { contents: source, loader: 'js', warnings: [{ text }] };
        }
        return { contents: changed, loader: 'js' };
      });
    }
  },
};
