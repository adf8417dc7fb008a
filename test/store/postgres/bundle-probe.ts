/** Bundled by bridge.test.ts as dist/ is (scripts/build.mjs): proves the worker file is found and runs. */
import { PostgresBridge } from '../../../src/store/postgres/bridge.js';

const bridge = new PostgresBridge({ url: process.argv[2] ?? '' });
const { rows } = bridge.query<{ answer: number }>('SELECT $1::int + 1 AS answer', [41]);
process.stdout.write(JSON.stringify(rows));
bridge.close();
