import { draft, EventDraft } from '@caseloop/contracts';

/**
 * The scheduling clock says *when*; the ledger says *whether the work already exists*. A tick's
 * id is the interval slot it falls in, so replicas ticking in the same slot write one event.
 */
export function tickFor(nowMs: number, intervalMs: number): { tickId: string; slotStartMs: number } {
  const slot = Math.floor(nowMs / intervalMs);
  return { tickId: `tick-${intervalMs}-${slot}`, slotStartMs: slot * intervalMs };
}

export function clockTicked(nowMs: number, intervalMs: number): EventDraft<'ClockTicked'> {
  const { tickId, slotStartMs } = tickFor(nowMs, intervalMs);
  return draft('ClockTicked', {
    tickId,
    at: new Date(slotStartMs).toISOString(),
    deltaRequestId: `delta-${tickId}`,
  });
}
