import { join } from 'node:path';
import type { Clock } from '../../src/core/clock.js';
import { createLogger } from '../../src/logger.js';
import type { Embedder } from '../../src/memory/embeddings.js';
import { Memory, type MemoryOptions } from '../../src/memory/memory.js';
import type { Db } from '../../src/store/sqlite/db.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../support/engine.js';
import { migratedDbFile } from '../support/migrated-db.js';

/** A Memory over a real SQLite file in a fresh data dir. */
export function testMemory(options: Partial<MemoryOptions> & { dir?: string; embedder?: Embedder; clock?: Clock } = {}): { memory: Memory; store: SqliteStore; db: Db; dir: string } {
  const dir = options.dir ?? tempDir('hob-mem-');
  const clock = options.clock ?? { now: () => Date.now() };
  const store = openSqliteStore(migratedDbFile(join(dir, 'hob.db')), { clock });
  const memory = new Memory({
    store,
    clock,
    logger: createLogger({ level: 'silent', destination: 'silent' }),
    dataDir: dir,
    defaultTimezone: 'UTC',
    snapshotChars: 2000,
    extract: 'rules',
    ...options,
  });
  return { memory, store, db: store.db, dir };
}

/** What one person told hob over a few weeks: the search-quality table's entries. */
export const ENTRIES: Record<string, string> = {
  padel: 'Padel with Jonas every Thursday at 19:00, court 3',
  wifeBirthday: "My wife Giulia's birthday is on 14 March",
  dentist: 'Dentist appointment with Dr. Weber on 12 January at 9:30',
  nas: 'The NAS at home is nas.home.lan (192.168.1.20), Synology DS920+',
  staging: 'Staging server is staging.acme.io, deploy with ./scripts/deploy.sh staging',
  prodDb: 'Production database: Postgres 16 on db1.acme.io port 5432',
  allergy: 'I am allergic to peanuts and shellfish',
  car: 'My car is a blue 2019 Skoda Octavia, plate M-AB 1234',
  passport: 'Passport expires on 3 August 2028',
  coffee: 'Coffee: prefers espresso, no sugar, oat milk in cappuccino',
  daughterSchool: 'Daughter Emma goes to Grundschule am Park, pickup at 15:30',
  gym: 'Gym membership at FitX, cancel before end of June',
  vacation: 'Summer vacation planned in Sardinia, flights booked for 2 July',
  landlord: 'Landlord is Mr. Fischer, phone +49 151 2345678',
  wifi: 'Guest wifi password is sunflower-42',
  bookClub: 'Book club meets the first Monday of the month; currently reading Dune',
  repo: 'The hob repository is github.com/ann/hob, main branch is protected',
  vpn: 'Work VPN uses WireGuard, config in ~/vpn/work.conf',
  mother: 'Mother lives in Verona, calls every Sunday evening',
  insurance: 'Car insurance renewal with HUK due in November',
  plants: 'Water the orchids every Friday, the cactus once a month',
  running: 'Training for the Munich half marathon in October',
  tax: 'Tax advisor is Frau Schmidt, documents due by 31 May',
  bike: 'Bike lock code is 4711',
  node: 'Our services run on Node 20; upgrade to Node 22 planned for Q2',
  backup: 'Nightly backup runs at 02:00 with restic to Backblaze B2',
  doctor: 'Family doctor is Dr. Rossi, Via Roma 12, open mornings only',
  cat: 'Cat Miso needs her thyroid pills twice a day',
  recipe: "Grandma's lasagne recipe uses béchamel and nutmeg",
  language: 'Learning Spanish on Duolingo, 200 day streak',
  meeting: 'Weekly team standup on Mondays at 10:00 on Zoom',
  marco: 'Marco collects vintage fountain pens',
};

/** Questions in plain words, and the entry each must find in the top 3 (full-text only). */
export const QUESTIONS: [string, keyof typeof ENTRIES][] = [
  ['when do I play padel this week', 'padel'],
  ["when is my wife's birthday?", 'wifeBirthday'],
  ['what time is the dentist', 'dentist'],
  ["what's the IP of my NAS", 'nas'],
  ['how do I deploy to staging', 'staging'],
  ['which postgres version is the production database', 'prodDb'],
  ['am I allergic to anything', 'allergy'],
  ["what's my license plate", 'car'],
  ['when does my passport expire', 'passport'],
  ['how do I like my coffee', 'coffee'],
  ['what time do I pick up Emma from school', 'daughterSchool'],
  ['by when must I cancel the gym', 'gym'],
  ['when are our flights to Sardinia', 'vacation'],
  ["what's the landlord's phone number", 'landlord'],
  ['guest wifi password please', 'wifi'],
  ['which book are we reading in the book club', 'bookClub'],
  ['where is the hob repo', 'repo'],
  ['where is my wireguard config', 'vpn'],
  ['when does mom call', 'mother'],
  ['when is the car insurance due', 'insurance'],
  ['how often should I water the orchids', 'plants'],
  ['which marathon am I training for', 'running'],
  ['when are the tax documents due', 'tax'],
  ["what's the code for my bike lock", 'bike'],
  ['which node version do the services run', 'node'],
  ['when does the backup run', 'backup'],
  ["what's the address of the family doctor", 'doctor'],
  ['how many pills does Miso take', 'cat'],
  ['lasagne recipe', 'recipe'],
  ['how is my Spanish streak going', 'language'],
  ['when is the standup meeting', 'meeting'],
  ['what does Marco collect', 'marco'],
  // Other languages people write in: stop words dropped there too.
  ['wann spiele ich Padel', 'padel'],
  // As the model asks: the tool's description has it add the translation of the key word.
  ['quando scade il passaporto passport', 'passport'],
  ['où est la config wireguard', 'vpn'],
  ['cuándo es el cumpleaños de Giulia', 'wifeBirthday'],
];
