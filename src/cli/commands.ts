/**
 * What commander's actions run (cli/program.ts), as one module loaded by the first action that
 * needs any of it. One dynamic import per command made esbuild split hob's code into a chunk
 * for each distinct set of importers: 22 more files on `hob start`'s path and 23 on `hob ask`'s,
 * each costing node a resolve, a stat, a read and a link (~0.4 ms apiece), for commands that
 * are light beside the app they build. `hob --help` loads none of it.
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
