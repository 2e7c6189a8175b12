import { caseViewProjection } from '@caseloop/projections';
import { DEPRECATED_PROJECTION_NAMES, projectionArgument } from './projections.commands';

describe('projection arguments', () => {
  const io = () => {
    const lines: string[] = [];
    return { lines, err: (l: string) => lines.push(l) };
  };

  it('resolves a current name without a word on stderr', () => {
    const e = io();
    expect(projectionArgument('case-view', e)).toBe(caseViewProjection);
    expect(e.lines).toEqual([]);
  });

  it('resolves the deprecated case-ledger to case-view and warns once', () => {
    const e = io();
    expect(projectionArgument('case-ledger', e)).toBe(caseViewProjection);
    expect(e.lines).toHaveLength(1);
    expect(e.lines[0]).toContain('case-ledger is now called case-view');
    expect(e.lines[0]).toContain('deprecated');
  });

  it('every deprecated name leads to a projection that exists', () => {
    for (const [old, current] of DEPRECATED_PROJECTION_NAMES) {
      expect(projectionArgument(old, io()).name).toBe(current);
    }
  });

  it('refuses an unknown name, and names inherited from Object are not aliases', () => {
    expect(() => projectionArgument('no-such-view', io())).toThrow(/no projection named no-such-view/);
    expect(() => projectionArgument('constructor', io())).toThrow(/no projection named constructor/);
  });
});
