import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IdentityIndex, identityConfig } from '@caseloop/identity';

/**
 * Identity decision latency against 10k open cases. The open cases are built from the labelled
 * reports, recombined (sentences swapped between reports, versions, codes and product nouns
 * varied) so the index has realistic vocabulary and posting-list lengths, not 10k copies.
 * Prints JSON lines: identity_p50_ms, identity_p99_ms (and the build time of the index).
 */
const OPEN_CASES = Number(process.env.BENCH_OPEN_CASES ?? 10_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 2_000);

let seed = 42;
const rand = (): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

const texts = readFileSync(join(__dirname, '../libs/identity/eval/reports.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => (JSON.parse(l) as { text: string }).text);
const sentences = texts.flatMap((t) => t.split(/(?<=[.!?\n])\s+/)).filter((s) => s.length > 10);
const nouns = [
  'invoice',
  'board',
  'widget',
  'calendar',
  'sidebar',
  'comment',
  'project',
  'label',
  'filter',
  'timeline',
  'avatar',
  'report',
  'tag',
  'milestone',
  'folder',
];
const errors = [
  'TypeError',
  'RangeError',
  'KeyError',
  'ValueError',
  'NullPointerException',
  'IllegalStateException',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOENT',
];

function synthetic(i: number): string {
  const parts = [pick(sentences), pick(sentences)];
  if (rand() < 0.5)
    parts.push(
      `The ${pick(nouns)} ${pick(['breaks', 'is empty', 'never loads', 'shows wrong data', 'flickers'])} on version ${1 + (i % 7)}.${i % 13}.${i % 5}`,
    );
  if (rand() < 0.3)
    parts.push(
      `${pick(errors)}: ${pick(nouns)} ${pick(['undefined', 'missing', 'not found'])} (E${1000 + (i % 4000)})`,
    );
  if (rand() < 0.2) parts.push(`    at ${pick(nouns)}Service.load (${pick(nouns)}.ts:${i % 300}:${i % 40})`);
  return parts.join(' ');
}

const index = new IdentityIndex(identityConfig());
const t0 = performance.now();
for (let i = 0; i < OPEN_CASES; i++) index.add(`C${i}`, `s${i}`, synthetic(i));
const buildMs = performance.now() - t0;

for (let i = 0; i < 200; i++) index.decide({ text: pick(texts) });
const lat: number[] = [];
let decisions = { link: 0, review: 0, new: 0 };
for (let i = 0; i < QUERIES; i++) {
  const q = rand() < 0.5 ? pick(texts) : synthetic(OPEN_CASES + i);
  const s = performance.now();
  const d = index.decide({ text: q });
  lat.push(performance.now() - s);
  decisions = { ...decisions, [d.decision]: decisions[d.decision] + 1 };
}
lat.sort((a, b) => a - b);
const q = (p: number): number =>
  Math.round((lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] as number) * 1000) / 1000;
const line = (metric: string, value: number, unit: string): void =>
  console.log(JSON.stringify({ metric, value, unit, open_cases: OPEN_CASES, queries: QUERIES }));
line('identity_p50_ms', q(0.5), 'ms');
line('identity_p99_ms', q(0.99), 'ms');
line('identity_max_ms', q(1), 'ms');
line('identity_index_build_ms', Math.round(buildMs), 'ms');
console.log(JSON.stringify({ metric: 'identity_decisions', ...decisions }));
