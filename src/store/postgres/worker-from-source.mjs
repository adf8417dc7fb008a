// Starts the bridge's worker from the TypeScript source (tests, benchmarks, `tsx src/cli.ts`):
// tsx's loader first, then worker.ts. The bundle (dist/) runs postgres-worker.js instead.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
