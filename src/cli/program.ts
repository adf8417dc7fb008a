import { Command } from 'commander';
import { consoleUserId } from './console-identity.js';

/**
 * hob's command line (commander), for every command but a plain `hob start` (cli.ts starts
 * that without it). Each command loads only what it needs, so `hob --help` and `hob ask`
 * start fast.
 */
const program = new Command()
  .name('hob')
  .description('A personal AI assistant for your terminal and your chats.')
  .option('-c, --config <file>', 'config file (default: $HOB_CONFIG or ~/.hob/config.yaml)')
  .showHelpAfterError();

program
  .command('chat')
  .description('talk to hob in this terminal (piped input: one message per line)')
  .action(async () => {
    const app = await loadApp('a terminal');
    const { runChat, terminalChat } = await import('./commands.js');
    try {
      await runChat(terminalChat(app));
    } finally {
      await app.close();
    }
  });

program
  .command('ask')
  .description('answer one message and exit')
  .argument('<message...>', 'what to ask')
  .option('--json', 'print every event as a JSON line')
  .option('-y, --yes', 'allow tool calls that would ask for approval (rules that deny still deny)')
  .action(async (words: string[], flags: { json?: boolean; yes?: boolean }) => {
    const app = await loadApp('a one-off command line question');
    const { runAsk } = await import('./commands.js');
    try {
      if (app.extensions.mcp.status().length) await (await import('./commands.js')).waitForMcp(app.extensions.mcp.ready());
      app.conversations.startSession('cli:ask');
      process.exitCode = await runAsk({
        engine: app.engine('cli:ask'),
        prompt: words.join(' '),
        json: Boolean(flags.json),
        yes: Boolean(flags.yes),
        userId: consoleUserId(),
      });
    } finally {
      await app.close();
    }
    // The answer is out and the log flushed: leave now rather than wait for idle HTTP
    // keep-alive sockets and timers to wind down (about 150 ms).
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
    process.exit();
  });

program
  .command('start')
  .description('run hob on every configured channel (the terminal when none is configured)')
  .action(async () => {
    const { startCommand } = await import('./start.js');
    await startCommand(program.opts<{ config?: string }>().config);
  });

program
  .command('doctor')
  .description('check the config, the model endpoint and each chat token')
  .action(async () => {
    const { runDoctor } = await import('./commands.js');
    const { config, path } = await readConfig();
    const checks = await runDoctor(config, path);
    for (const check of checks) process.stdout.write(`${check.ok ? (check.warn ? '!' : '✓') : '✗'} ${check.name}: ${check.detail}\n`);
    if (checks.some((check) => !check.ok)) process.exitCode = 1;
  });

program
  .command('pairing')
  .description('list, approve or revoke people who asked to talk to hob')
  .argument('<verb>', 'list | approve | revoke')
  .argument('[value]', 'pairing code (approve) or user id (revoke)')
  .option('--platform <name>', 'platform for revoke (needed when more than one chat channel is configured)')
  .action(async (verb: string, value: string | undefined, flags: { platform?: string }) => {
    const { runPairing } = await import('./commands.js');
    const { config } = await readConfig();
    runPairing(config, verb, value, flags.platform);
  });

program
  .command('memory')
  .description('see, search, export or import what hob remembers (yours, or --person ID)')
  .argument('<verb>', 'list | search | export | import')
  .argument('[value]', 'the query (search) or a folder (export, import)')
  .option('--person <id>', 'a person id: <platform>:<user id> (default: you, at this terminal)')
  .option('--limit <n>', 'how many entries to show')
  .action(async (verb: string, value: string | undefined, flags: { person?: string; limit?: string }) => {
    const { runMemory } = await import('./commands.js');
    const { config } = await readConfig();
    await runMemory(config, verb, value, flags);
  });

program
  .command('jobs')
  .description('list, pause, resume or delete reminders and reports')
  .argument('[verb]', 'list | pause | resume | delete', 'list')
  .argument('[id]', 'the job id (pause, resume, delete)')
  .action(async (verb: string, id: string | undefined) => {
    const { runJobs } = await import('./commands.js');
    const { config } = await readConfig();
    process.exitCode = runJobs(config, verb, id);
  });

const mcp = program.command('mcp').description('MCP servers from the config and plugins');
mcp
  .command('list')
  .description('connect to each MCP server and show its state and tools')
  .action(async () => {
    const { runMcpList } = await import('./commands.js');
    const { config } = await readConfig();
    await runMcpList(config, (text) => process.stdout.write(text));
  });

const plugins = program.command('plugins').description('plugins in <data_dir>/plugins');
plugins
  .command('list')
  .description('show each plugin, whether it is on, and what it brings')
  .action(async () => {
    const { runPluginsList } = await import('./commands.js');
    const { config } = await readConfig();
    runPluginsList(config, (text) => process.stdout.write(text));
  });

program
  .command('sessions')
  .description('your past conversations: list, show one, export one as Markdown')
  .argument('<verb>', 'list | show | export')
  .argument('[which]', 'a number from `hob sessions list`, or a session id')
  .option('--all', "everyone's sessions, not only the terminal's (the owner's)")
  .option('-o, --out <file>', 'export: write the Markdown to this file')
  .action(async (verb: string, which: string | undefined, flags: { all?: boolean; out?: string }) => {
    const { runSessions } = await import('./commands.js');
    const { config } = await readConfig();
    runSessions(config, consoleUserId(), verb, which, flags);
  });

const storeCommand = program.command('store').description('where hob keeps its data');
storeCommand
  .command('migrate')
  .description("copy this data dir's SQLite database into PostgreSQL, table by table, and check the counts")
  .requiredOption('--to <kind>', 'the store to copy to: postgres')
  .argument('[url]', `postgres://USER:PASSWORD@HOST:PORT/DATABASE (default: $HOB_DATABASE_URL)`)
  .option('--force', 'replace the hob data the target database already holds')
  .action(async (url: string | undefined, flags: { to?: string; force?: boolean }) => {
    const { runStoreMigrate } = await import('./commands.js');
    const { config, path } = await readConfig();
    runStoreMigrate(config, url, flags, path);
  });

/** The config named by `--config` (or found in the usual places). */
async function readConfig() {
  const { loadHobConfig } = await import('../app/channels.js');
  return loadHobConfig({ path: program.opts<{ config?: string }>().config });
}

async function loadApp(channel: string) {
  const { createApp } = await import('../app.js');
  const { config, path } = await readConfig();
  return createApp({ config, configPath: path, channel });
}

/** Parses `argv` (as process.argv: node, the script, then hob's arguments) and runs its command. */
export async function runProgram(argv: string[]): Promise<void> {
  // What the chat channels add (a channel's own terminal commands), from the registry alone:
  // the config's reader (YAML and hob's whole schema) loads only for a command that reads it,
  // so `hob --help` does without.
  const [{ CHANNELS }, { addChannelCommands }] = await Promise.all([import('../../adapters/index.js'), import('./channel-commands.js')]);
  addChannelCommands(program, CHANNELS, readConfig);
  await program.parseAsync(argv);
}
