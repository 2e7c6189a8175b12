import type { RecordedEvent } from '@caseloop/contracts';
import { safeText } from './view-text';

/** The checks panel of a case: its latest run, check by check. */

export interface CheckProgressLine {
  index: number;
  name: string;
  kind: string;
  status: 'running' | 'passed' | 'failed' | 'timeout' | 'error' | 'skipped';
  startedAt: string;
  durationMs: number | null;
  /** The last lines of its (redacted) output, once it finished. */
  tail: string[];
}

export interface ChecksProgressView {
  revision: string;
  attemptId: string | null;
  total: number;
  running: boolean;
  lines: CheckProgressLine[];
}

/**
 * The latest run of the checks from the worker's CheckStarted/CheckFinished events: the run that
 * began with the most recent first check; a check without its end is running.
 */
export function checksProgress(events: readonly RecordedEvent[]): ChecksProgressView | null {
  const starts = events.filter((e): e is RecordedEvent<'CheckStarted'> => e.type === 'CheckStarted');
  const first = starts.filter((e) => e.data.index === 0).at(-1) ?? starts[0];
  if (!first) return null;
  const { revision, attemptId } = first.data;
  const inRun = <T extends RecordedEvent>(e: T, rev: string | undefined, attempt: string | null) =>
    e.seq >= first.seq && rev === revision && attempt === attemptId;
  const runStarts = starts.filter((e) => inRun(e, e.data.revision, e.data.attemptId));
  const ends = new Map(
    events
      .filter((e): e is RecordedEvent<'CheckFinished'> => e.type === 'CheckFinished')
      .filter((e) => inRun(e, e.data.result.revision, e.data.attemptId))
      .map((e) => [e.data.index, e] as const),
  );
  const lines = runStarts.map((st): CheckProgressLine => {
    const end = ends.get(st.data.index);
    return {
      index: st.data.index,
      name: st.data.name,
      kind: st.data.kind,
      status: end ? end.data.result.outcome : 'running',
      startedAt: st.occurredAt,
      durationMs: end ? end.data.result.durationMs : null,
      tail: end ? end.data.excerpt.tail.slice(-3).map(safeText) : [],
    };
  });
  return {
    revision,
    attemptId,
    total: first.data.total,
    running: lines.some((l) => l.status === 'running'),
    lines,
  };
}
