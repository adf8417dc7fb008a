import { createRequire } from 'node:module';
import { errorMessage } from '../../core/errors.js';
import type { VectorRepository } from '../vectors.js';
import type { Db } from './db.js';

/**
 * Vectors in the same SQLite file, through `sqlite-vec`, partitioned by person so a search
 * only ever reads that person's vectors. Each vector is kept as bits (its signs, 1/32 of the
 * size) in a vec0 table and as floats in a plain table: a search scans the bits for
 * candidates by Hamming distance, then ranks those by exact cosine distance. (Dimensions
 * that are not a multiple of 8 use one float vec0 table instead.)
 */
export class SqliteVectors implements VectorRepository {
  private tables = new Set<number>();

  private constructor(private readonly db: Db) {
    for (const row of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'memory_vec*'").all() as { name: string }[]) {
      const dimensions = /^memory_vec(?:bit)?_(\d+)$/.exec(row.name)?.[1];
      if (dimensions) this.tables.add(Number(dimensions));
    }
  }

  /** Loads sqlite-vec into the connection; the reason when it cannot be loaded here. */
  static open(db: Db): { index: SqliteVectors } | { error: string } {
    try {
      const require = createRequire(import.meta.url);
      const sqliteVec = require('sqlite-vec') as { load(db: Db): void };
      sqliteVec.load(db);
      return { index: new SqliteVectors(db) };
    } catch (error) {
      return { error: `sqlite-vec could not be loaded (${errorMessage(error)})` };
    }
  }

  /** Whether any vector table exists (then deletes must reach it even with embeddings switched off). */
  static present(db: Db): boolean {
    return Boolean(db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name GLOB 'memory_vec*'").get());
  }

  put(seq: number, personId: string, vector: Float32Array): void {
    const dimensions = vector.length;
    this.ensureTables(dimensions);
    this.deleteFrom(dimensions, [seq]);
    if (hasBits(dimensions)) {
      this.db.prepare(`INSERT INTO memory_vecbit_${dimensions} (rowid, person, embedding) VALUES (?, ?, vec_quantize_binary(?))`).run(BigInt(seq), personId, vector);
      this.db.prepare(`INSERT INTO memory_vecf_${dimensions} (seq, embedding) VALUES (?, ?)`).run(seq, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
    } else {
      this.db.prepare(`INSERT INTO memory_vec_${dimensions} (rowid, person, embedding) VALUES (?, ?, ?)`).run(BigInt(seq), personId, vector);
    }
  }

  delete(seqs: number[]): void {
    for (const dimensions of this.tables) this.deleteFrom(dimensions, seqs);
  }

  /** The nearest of this person's entries, nearest first. */
  nearest(personId: string, vector: Float32Array, k: number): number[] {
    const dimensions = vector.length;
    if (!this.tables.has(dimensions)) return [];
    if (!hasBits(dimensions)) {
      const rows = this.db
        .prepare(`SELECT rowid FROM memory_vec_${dimensions} WHERE embedding MATCH ? AND person = ? AND k = ? ORDER BY distance`)
        .all(vector, personId, k) as { rowid: number | bigint }[];
      return rows.map((row) => Number(row.rowid));
    }
    const candidates = this.db
      .prepare(`SELECT rowid FROM memory_vecbit_${dimensions} WHERE embedding MATCH vec_quantize_binary(?) AND person = ? AND k = ?`)
      .all(vector, personId, Math.min(BIT_CANDIDATES_MAX, Math.max(BIT_CANDIDATES_MIN, k * 10))) as { rowid: number | bigint }[];
    const exact = this.db.prepare(`SELECT vec_distance_cosine(embedding, ?) AS distance FROM memory_vecf_${dimensions} WHERE seq = ?`);
    return candidates
      .map((row) => ({ seq: Number(row.rowid), distance: (exact.get(vector, Number(row.rowid)) as { distance: number } | undefined)?.distance ?? Infinity }))
      .sort((a, b) => a.distance - b.distance)
      .slice(0, k)
      .map((row) => row.seq);
  }

  private deleteFrom(dimensions: number, seqs: number[]): void {
    const statements = hasBits(dimensions)
      ? [`DELETE FROM memory_vecbit_${dimensions} WHERE rowid = ?`, `DELETE FROM memory_vecf_${dimensions} WHERE seq = ?`]
      : [`DELETE FROM memory_vec_${dimensions} WHERE rowid = ?`];
    for (const sql of statements) {
      const drop = this.db.prepare(sql);
      for (const seq of seqs) drop.run(BigInt(seq));
    }
  }

  private ensureTables(dimensions: number): void {
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192) throw new Error(`an embedding of ${dimensions} dimensions cannot be stored`);
    if (this.tables.has(dimensions)) return;
    if (hasBits(dimensions)) {
      this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS memory_vecbit_${dimensions} USING vec0(person TEXT PARTITION KEY, embedding bit[${dimensions}])`);
      this.db.exec(`CREATE TABLE IF NOT EXISTS memory_vecf_${dimensions} (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL) STRICT`);
    } else {
      this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS memory_vec_${dimensions} USING vec0(person TEXT PARTITION KEY, embedding float[${dimensions}] distance_metric=cosine)`);
    }
    this.tables.add(dimensions);
  }
}

/** Bit candidates ranked exactly: generous for small memories (then the search is exact), capped for large ones. */
const BIT_CANDIDATES_MIN = 200;
const BIT_CANDIDATES_MAX = 1000;

/** Signs pack into whole bytes only. */
function hasBits(dimensions: number): boolean {
  return dimensions % 8 === 0;
}

