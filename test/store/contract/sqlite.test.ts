/** The store contract suite on the SQLite store (a fresh file per test). */
import { join } from 'node:path';
import { openSqliteStore } from '../../../src/store/sqlite/store.js';
import { tempDir } from '../../support/engine.js';
import { conversationsContract } from './conversations.js';
import { deliveryContract } from './delivery.js';
import type { StoreFactory } from './harness.js';
import { peopleContract } from './people.js';
import { schedulesContract } from './schedules.js';
import { tasksContract } from './tasks.js';

const sqlite: StoreFactory = { kind: 'sqlite', open: (clock) => openSqliteStore(join(tempDir('hob-contract-'), 'hob.db'), { clock }) };

conversationsContract(sqlite);
deliveryContract(sqlite);
schedulesContract(sqlite);
peopleContract(sqlite);
tasksContract(sqlite);
