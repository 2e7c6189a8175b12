import { envelopeProblem, envelopeSchema, EventMeta } from './envelope';

const valid: EventMeta & { type: string; data: unknown } = {
  eventId: 'cmd-1:0',
  type: 'CaseApproved',
  version: 1,
  aggregate: 'case',
  aggregateId: 'C01JABCDEF',
  producer: 'coordinator',
  commandId: 'cmd-1',
  causationId: null,
  correlationId: 'corr-1',
  occurredAt: '2026-11-29T10:00:00.000Z',
  data: {},
};

// Each field with values on both sides of the schema's edges.
const variants: Record<string, unknown[]> = {
  eventId: [
    'a',
    'cmd.1:0',
    'x'.repeat(256),
    'x'.repeat(257),
    '',
    '-x',
    ':x',
    'a b',
    'a\r\nb',
    'a*',
    7,
    null,
    undefined,
  ],
  type: ['T', 'x'.repeat(100), 'x'.repeat(101), '', 3, null],
  version: [1, 2, 2 ** 53 - 1, 2 ** 53, 0, -1, 1.5, NaN, Infinity, '1', null],
  aggregate: ['case', 'source', 'ops', 'cases', '', null],
  aggregateId: ['C', 'x'.repeat(128), 'x'.repeat(129), '', 5, null],
  producer: ['intake', 'coordinator', 'worker', 'lease', 'evidence', 'monitor', 'root', '', null],
  commandId: ['c', 'a.b', '', '.a', 'x'.repeat(257), null],
  causationId: [null, 'cause-1', 'a:b.c', '', 'a b', undefined, 0],
  correlationId: ['corr', '', 'a/b', null],
  occurredAt: [
    '2026-11-29T10:00:00Z',
    '2026-11-29T10:00:00.123456789+02:00',
    '2026-11-29T10:00:00-05:30',
    '2024-02-29T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-11-29T10:00:00',
    '2026-11-29T10:00Z',
    '2026-11-29 10:00:00Z',
    '2026-11-29T24:00:00Z',
    '2026-11-29T10:00:00+24:00',
    '2026-11-29',
    '',
    1_700_000_000_000,
    null,
  ],
};

describe('envelopeProblem', () => {
  it('accepts a valid envelope', () => {
    expect(envelopeProblem(valid)).toBeNull();
    expect(envelopeSchema.safeParse(valid).success).toBe(true);
  });

  const cases = Object.entries(variants).flatMap(([field, values]) => values.map((v) => [field, v] as const));
  it.each(cases)('agrees with envelopeSchema on %s = %p', (field, value) => {
    const candidate = { ...valid, [field]: value } as typeof valid;
    const schemaAccepts = envelopeSchema.safeParse(candidate).success;
    const problem = envelopeProblem(candidate);
    expect(problem === null).toBe(schemaAccepts);
    if (problem !== null) expect(problem.startsWith(`${field}:`)).toBe(true);
  });
});
