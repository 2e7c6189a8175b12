import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeEvent, encodeEvent, isEventType, RecordedEvent } from '@caseloop/contracts';
import { ApplyContext } from '../projection';
import { generateHistory } from '../testing/case-history.generator';
import { caseViewProjection } from './case-view.projection';

/**
 * What the case view writes for one fixed history, per revision of the projection. A version is
 * bound to the revision it was built with, and services refuse to write a version of another
 * revision: so when `evolveCase` or the row mapping changes what a history becomes, the revision
 * must change too, or live versions would silently mix rows of the old logic with rows of the new.
 * The history takes the generator's rarer paths too (`variety`), and every event type `evolveCase`
 * handles occurs in it, so a change to any branch of the fold moves the fingerprint.
 *
 * When this test fails: if the rows changed on purpose, bump `caseViewProjection.revision` and
 * record the new fingerprint under the new revision (operators then run `caseloop rebuild`); if only
 * the history generator changed, replace the fingerprint of the current revision. When the coverage
 * test fails, `evolveCase` handles a type the generator never produces: teach the generator's
 * `variety` path to produce it (and record the fingerprint again, under a new revision if the fold changed).
 */
const FINGERPRINTS: Record<number, string> = {
  1: '158f8a63ba43133d76861ae7',
  // The rows changed when events gained versions and fields (worker usage and blockers, receipts v2, leases).
  2: 'cb02a6e948f96d837e431706',
  // Reports are redacted at rest: the timeline drops sealed raw text, sources rows gained raw_text
  // (sealed, forgotten, not_kept), and SourceForgotten rewrites a source's row.
  3: '66ec1306b2c59cf03623d09d',
};

/** The event types `evolveCase` folds: the one that opens a case, and those its switch handles. */
function foldedTypes(): string[] {
  const source = readFileSync(join(__dirname, '../../../case-model/src/case.state.ts'), 'utf8');
  const handled = [...source.matchAll(/case '([A-Za-z]+)'/g)].map((m) => m[1] as string);
  return ['CaseOpened', ...new Set(handled)];
}

/** JSON with object keys sorted at every depth: jsonb does not keep key order, so neither does the fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

async function fingerprint(): Promise<{ fingerprint: string; events: number; types: Set<string> }> {
  const { events } = generateHistory({ cases: 400, seed: 20261129, revisionLoops: 2, variety: true });
  // Through the codec, as a runner reads them: the payloads as their schemas parse them.
  const recorded: RecordedEvent[] = events.map((e, i) => {
    const enc = encodeEvent('fingerprint', e);
    return decodeEvent(enc.subject, enc.body, i + 1);
  });
  const ctx: ApplyContext = {
    memo: new Map(),
    table: (name) => name,
    // Every case is in the memo after its first event; nothing is read back.
    query: async () => [],
  };
  const hash = createHash('sha256');
  for (let i = 0; i < recorded.length; i += 250) {
    const changes = await caseViewProjection.apply(recorded.slice(i, i + 250), ctx);
    for (const table of Object.keys(changes).sort()) hash.update(`${table}:${canonical(changes[table])}\n`);
  }
  return {
    fingerprint: hash.digest('hex').slice(0, 24),
    events: recorded.length,
    types: new Set(recorded.map((e) => e.type)),
  };
}

describe('case view revision', () => {
  let unchanged: ReturnType<typeof fingerprint> | undefined;
  /** The fingerprint of the fold as it is, computed once for the tests that compare with it. */
  const current = () => (unchanged ??= fingerprint());

  it('folds a history in which every event type evolveCase handles occurs', async () => {
    const folded = foldedTypes();
    // The list is read from the fold's source: make sure it was read, and names real event types.
    expect(folded.length).toBeGreaterThanOrEqual(29);
    expect(folded.filter((t) => !isEventType(t))).toEqual([]);
    const { types } = await current();
    expect(folded.filter((t) => !types.has(t))).toEqual([]);
  });

  it('changes whenever the rows written for a fixed history change', async () => {
    const got = await current();
    expect({ revision: caseViewProjection.revision, fingerprint: got.fingerprint }).toEqual({
      revision: caseViewProjection.revision,
      fingerprint: FINGERPRINTS[caseViewProjection.revision],
    });
  });

  it('the fingerprint sees a change in the fold', async () => {
    const before = await current();
    const original = caseViewProjection.apply;
    // A one-field change in what a case row holds must move the fingerprint.
    (caseViewProjection as { apply: typeof original }).apply = async (batch, ctx) => {
      const changes = await original(batch, ctx);
      for (const row of changes.cases ?? []) row.title = `${String(row.title)}.`;
      return changes;
    };
    try {
      expect((await fingerprint()).fingerprint).not.toBe(before.fingerprint);
    } finally {
      (caseViewProjection as { apply: typeof original }).apply = original;
    }
  });
});
