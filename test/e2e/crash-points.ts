import { RecordedEvent } from '@caseloop/contracts';
import type { LoopWorld } from './loop.fixture';

/** Points of the loop, in order, at which a service may die: each is "this fact is visible". */
export const CRASH_POINTS: {
  name: string;
  reached: (w: LoopWorld, c: { reportId: string; caseId: string | null }, events: RecordedEvent[]) => boolean;
}[] = [
  { name: 'report posted', reached: () => true },
  { name: 'report acknowledged', reached: (w, c) => w.botPosts(c.reportId).length > 0 },
  { name: 'task assigned', reached: (_w, _c, e) => e.some((x) => x.type === 'TaskAssigned') },
  { name: 'attempt started', reached: (_w, _c, e) => e.some((x) => x.type === 'AttemptStarted') },
  { name: 'checks completed', reached: (_w, _c, e) => e.some((x) => x.type === 'ChecksCompleted') },
  { name: 'browser lease granted', reached: (_w, _c, e) => e.some((x) => x.type === 'LeaseGranted') },
  { name: 'receipt built', reached: (_w, _c, e) => e.some((x) => x.type === 'ReceiptBuilt') },
  {
    name: 'receipt delivery requested',
    reached: (_w, _c, e) => e.some((x) => x.type === 'DeliveryRequested' && x.data.kind === 'receipt'),
  },
];
