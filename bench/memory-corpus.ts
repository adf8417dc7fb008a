/**
 * The memory benchmarks' data (bench/memory.ts on SQLite, bench/postgres.ts): entries and
 * questions drawn from one 5,000-word vocabulary with a Zipf-like spread, so common words
 * match many entries, as in a real memory. Deterministic: one seed, one sequence.
 */

/** A small deterministic generator, so every run measures the same data. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'to', 'sa', 'vel', 'dor', 'fi', 'nu', 'pra', 'gel', 'bo', 'tri', 'xan', 'que'];
/**
 * Zipf (frequency ∝ 1/rank) over content words: ranks below 100 would be stop words, which
 * search drops, so words are drawn from ranks 100–5,100 (the commonest is in ~3% of entries).
 */
const ZIPF_FROM = 100;

export type MemoryCorpus = {
  sentence(words: number): string;
  question(): string;
  unitVector(dimensions: number): Float32Array;
  /** The generator itself, for figures drawn alongside (entry lengths). */
  rand(): number;
};

/** One corpus: every function draws from the same sequence, in call order. */
export function memoryCorpus(seed = 42): MemoryCorpus {
  const rand = random(seed);
  const vocabulary = Array.from({ length: 5000 }, (_, n) => {
    let word = '';
    for (let value = n + 7; word.length < 4 || value > 0; value = Math.floor(value / SYLLABLES.length)) word += SYLLABLES[value % SYLLABLES.length];
    return word;
  });
  const word = () => {
    const rank = Math.floor(ZIPF_FROM * ((vocabulary.length + ZIPF_FROM) / ZIPF_FROM) ** rand()) - ZIPF_FROM;
    return vocabulary[Math.min(rank, vocabulary.length - 1)] as string;
  };
  const sentence = (words: number) => Array.from({ length: words }, word).join(' ');
  return {
    sentence,
    question: () => `when did I ${sentence(2 + Math.floor(rand() * 4))} this week?`,
    unitVector: (dimensions) => {
      const vector = new Float32Array(dimensions);
      let norm = 0;
      for (let i = 0; i < dimensions; i++) {
        vector[i] = rand() - 0.5;
        norm += (vector[i] as number) ** 2;
      }
      return vector.map((value) => value / Math.sqrt(norm));
    },
    rand,
  };
}
