/**
 * hob's layers, checked on every CI run: `npm run depcheck` (dependency-cruiser, src/ and
 * adapters/, type-only imports included). The README's "Architecture" section says the same
 * in words; change both together.
 *
 *   cli       src/cli/, src/cli.ts, src/app.ts, src/app/  the composition root: builds everything
 *   gateway   src/gateway/                            chats in, conversations, delivery out
 *   services  src/memory/ scheduler/ mcp/ skills/ plugins/ voice/, src/extensions.ts
 *   engine    src/engine/                             the loop and a session's state
 *   base      src/providers/ tools/ policy/ store/ config/
 *   core      src/core/, src/logger.ts                shared nouns and helpers; imports nothing of hob
 *
 * A file imports only its own tier and the tiers below it; inside a tier any direction is
 * fine as long as it makes no circle. Adapters stand beside the tiers: they see only the
 * channel port (below), src/core and their own folder, and only the cli tier reaches them,
 * through each adapter's index.ts or the registry that lists them.
 */

const TIERS = [
  { name: 'core', where: 'src/core, src/logger.ts', paths: ['^src/core/', '^src/logger\\.ts$'] },
  { name: 'base', where: 'src/providers, tools, policy, store, config', paths: ['^src/(providers|tools|policy|store|config)/'] },
  { name: 'engine', where: 'src/engine', paths: ['^src/engine/'] },
  {
    name: 'services',
    where: 'src/memory, scheduler, mcp, skills, plugins, voice, src/extensions.ts',
    paths: ['^src/(memory|scheduler|mcp|skills|plugins|voice)/', '^src/extensions\\.ts$'],
  },
  { name: 'gateway', where: 'src/gateway', paths: ['^src/gateway/'] },
  { name: 'cli', where: 'src/cli, src/cli.ts, src/app.ts, src/app/', paths: ['^src/cli/', '^src/cli\\.ts$', '^src/app\\.ts$', '^src/app/'] },
];

/**
 * The channel port: what an adapter may import from src/gateway. channel.ts holds the
 * contract (ChannelAdapter, InboundMessage, OutboundMessage…) and channel-module.ts what a
 * channel says about itself (its ChannelModule: config section, access, creation, doctor);
 * beside them the helpers every adapter builds on and the gateway uses too: sending a split
 * message in parts, a live answer shown by editing one message, and format/ — the Markdown
 * kit (splitting to a platform's limit, one walk over Markdown that each adapter's renderer
 * gives its own dialect, the plain-text shortcut, grapheme boundaries). They import nothing of
 * hob but each other and src/core, so an adapter stays cut off from the engine, the store and
 * the rest of the gateway. A renderer for one platform lives in that platform's adapter.
 */
const CHANNEL_PORT = [
  '^src/gateway/channel\\.ts$',
  '^src/gateway/channel-module\\.ts$',
  '^src/gateway/send-parts\\.ts$',
  '^src/gateway/edited-live-answer\\.ts$',
  '^src/gateway/format/',
];

/**
 * The building blocks of a config section (zod: ids, secrets, URLs): a channel declares its
 * own section with them. It imports nothing of hob.
 */
const SCHEMA_PARTS = ['^src/config/schema-parts\\.ts$'];

/**
 * Who in src/ may import from adapters/: the composition root, which hands the channels to
 * the rest (config, policy and the gateway learn of them by what they are given). A layer
 * that reads the channel registry itself has to be named here, and the registry must then
 * stay as light as the port (the channels' SDKs loaded only when a channel is created).
 */
const ADAPTER_USERS = ['^src/cli/', '^src/cli\\.ts$', '^src/app\\.ts$', '^src/app/'];

/** What of adapters/ src/ may import: each channel's module (index.ts), or the one list of them. */
const ADAPTER_ENTRIES = ['^adapters/[^/]+/index\\.ts$', '^adapters/(registry|index)\\.ts$'];

const layerRules = TIERS.slice(0, -1).map((tier, index) => ({
  name: `${tier.name}-imports-only-below`,
  comment: `${tier.name} (${tier.where}) may import only its own tier and those below it (${TIERS.slice(0, index + 1)
    .map((below) => below.name)
    .join(', ')}), never ${TIERS.slice(index + 1)
    .map((above) => above.name)
    .join(', ')}. Move the shared piece down to where both may import it.`,
  severity: 'error',
  from: { path: tier.paths },
  to: { path: TIERS.slice(index + 1).flatMap((above) => above.paths) },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'adapter-sees-only-the-port',
      comment:
        'An adapter imports only the channel port (src/gateway/channel.ts and the helpers beside it, see CHANNEL_PORT), src/core, src/config/schema-parts.ts and its own folder (plus the files shared by all adapters at adapters/ top level).',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^src/', pathNot: ['^src/core/', ...CHANNEL_PORT, ...SCHEMA_PARTS] },
    },
    {
      name: 'adapter-stays-in-its-folder',
      comment: "An adapter does not import another adapter's files; what several share sits at adapters/ top level.",
      severity: 'error',
      from: { path: '^adapters/([^/]+)/' },
      to: { path: '^adapters/[^/]+/', pathNot: '^adapters/$1/' },
    },
    {
      name: 'port-stays-small',
      comment: 'The channel port imports only itself and src/core: every adapter gets whatever it imports.',
      severity: 'error',
      from: { path: CHANNEL_PORT },
      to: { path: '^src/', pathNot: ['^src/core/', ...CHANNEL_PORT] },
    },
    {
      name: 'schema-parts-stay-plain',
      comment: 'The config schema parts import nothing of hob: adapters use them.',
      severity: 'error',
      from: { path: SCHEMA_PARTS },
      to: { path: ['^src/', '^adapters/'] },
    },
    {
      name: 'adapters-reached-only-by-the-root',
      comment: 'Only the cli tier imports from adapters/ (see ADAPTER_USERS); the gateway knows channels by the port and by what it is given.',
      severity: 'error',
      from: { path: '^src/', pathNot: ADAPTER_USERS },
      to: { path: '^adapters/' },
    },
    {
      name: 'adapter-reached-through-its-index',
      comment: "Outside adapters/, a channel is imported by its index.ts (its ChannelModule) or through the registry that lists them, never by its inner files.",
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^adapters/', pathNot: ADAPTER_ENTRIES },
    },
    {
      name: 'no-circles',
      comment: 'Files that import each other cannot be read (or loaded) one after the other. Move what both need into a third file.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      comment: 'A file nothing imports and that imports nothing is dead code, or a file someone forgot to wire in.',
      severity: 'error',
      from: { orphan: true, path: ['^src/', '^adapters/'], pathNot: ['\\.d\\.ts$', '^src/store/postgres/worker-from-source\\.mjs$'] },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that names no file or package: a typo, or a package missing from package.json.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dep',
      comment: 'Runtime code must not need a devDependency: `npm ci --omit=dev` would leave it out.',
      severity: 'error',
      from: { path: ['^src/', '^adapters/'] },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
