/**
 * The command line's commands beside `start` (with the terminal chat, which `hob start` runs
 * when no chat channel is configured), as one module, loaded when one of them runs.
 *
 * Each `import()` is an entry point of dist/'s bundle, and the bundler puts the modules reached
 * from each different set of entry points in a chunk of their own: nine command entries, each
 * reaching its own part of hob (the store, the scheduler, memory, extensions), cut the app
 * into ~30 small files, and `hob start` read, linked and ran each of them (~1 ms apiece) on
 * the way to its first answer. One entry for all of them keeps the app in a few chunks; a
 * command loads the others' code with its own (tens of KB).
 */
export { runAsk } from './ask.js';
export { runChat, terminalChat } from './chat.js';
export { runDoctor } from './doctor.js';
export { runMcpList, runPluginsList, waitForMcp } from './extensions.js';
export { runJobs } from './jobs.js';
export { runMemory } from './memory.js';
export { runPairing } from './pairing.js';
export { runSessions } from './sessions.js';
export { runStoreMigrate } from './store-migrate.js';
