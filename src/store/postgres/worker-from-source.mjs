// Starts the bridge's worker from the TypeScript source (tests, benchmarks, `tsx src/cli.ts`):
// tsx's loader first, then worker.ts. The bundle (dist/) runs postgres-worker.js instead.
// HOB_POSTGRES_WORKER may name that bundled worker when it was built from this very source (a
// test run builds dist/ before its first test and sets it): it starts without tsx's loader,
// which costs about half a second of CPU in every worker.
import { pathToFileURL } from 'node:url';

const built = process.env.HOB_POSTGRES_WORKER;
if (built) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./worker.ts');
}
