import { clockTicked, tickFor } from './clock';

describe('scheduling clock', () => {
  const HOUR = 3_600_000;
  it('gives every moment of one interval the same tick, so replicas write one event', () => {
    const a = tickFor(Date.parse('2026-11-29T10:00:00Z'), HOUR);
    const b = tickFor(Date.parse('2026-11-29T10:59:59Z'), HOUR);
    const c = tickFor(Date.parse('2026-11-29T11:00:00Z'), HOUR);
    expect(a.tickId).toBe(b.tickId);
    expect(c.tickId).not.toBe(a.tickId);
  });

  it('asks intake for a delta named after the tick, at the start of its slot', () => {
    const e = clockTicked(Date.parse('2026-11-29T10:42:00Z'), HOUR);
    expect(e.type).toBe('ClockTicked');
    expect(e.data.at).toBe('2026-11-29T10:00:00.000Z');
    expect(e.data.deltaRequestId).toBe(`delta-${e.data.tickId}`);
  });
});
