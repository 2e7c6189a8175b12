import {
  EventData,
  EventDraft,
  EventType,
  eventDefinition,
  Producer,
  RecordedEvent,
} from '@caseloop/contracts';
import { CaseCommand, CaseContext, CaseDecision, SourceFacts } from '../case.commands';
import { decide as decideCase } from './case.decider';
import { foldRecord } from './case-record.evolve';

/** Given/when/then over events for the case decider (test support, no I/O). */
export const CASE_ID = 'C01JCASE0000000000000000000';
export const GUILD = '100000000000000001';
export const CHANNEL = '200000000000000002';
export const REV_A = 'a'.repeat(40);
export const REV_B = 'b'.repeat(40);
export const HEAD_1 = '1'.repeat(40);
export const HEAD_2 = '2'.repeat(40);
export const SHA = 'c'.repeat(64);
export const NOW = '2026-11-29T12:00:00.000Z';

export function source(n: number, text: string, extra: Partial<SourceFacts> = {}): SourceFacts {
  const messageId = `3000000000000${String(n).padStart(5, '0')}`;
  return {
    sourceId: `discord-${messageId}`,
    place: { guildId: GUILD, channelId: CHANNEL, threadId: null, messageId },
    reporterId: `4000000000000${String(n).padStart(5, '0')}`,
    text,
    attachments: 0,
    createdAt: NOW,
    ...extra,
  };
}

export const CLEAR_BUG =
  'Since updating to 4.3.0 the Windows desktop app crashes on startup with "Uncaught Exception: Cannot find module keytar". ' +
  'Expected it to open as before. Our whole team is blocked. Screenshot attached.';

export function context(sources: SourceFacts[], extra: Partial<CaseContext> = {}): CaseContext {
  return {
    now: NOW,
    sources,
    route: { channelId: CHANNEL, repository: 'tandem-desktop', owner: 'desktop-team' },
    repositories: [
      {
        id: 'tandem-desktop',
        owner: 'desktop-team',
        targetBranch: 'main',
        checkKinds: ['lint', 'typecheck', 'focused_test', 'build'],
      },
    ],
    classifier: null,
    maxQuestions: 3,
    taskIdleMs: 2 * 60 * 60 * 1000,
    ...extra,
  };
}

let seq = 0;
export function recorded<T extends EventType>(
  type: T,
  data: EventData<T>,
  producer?: Producer,
  caseId = CASE_ID,
): RecordedEvent {
  const def = eventDefinition(type);
  seq += 1;
  const parsed = def ? (def.schema.parse(data) as EventData<T>) : data;
  return {
    eventId: `e${seq}:0`,
    type,
    version: def?.version ?? 1,
    aggregate: def?.aggregate ?? 'case',
    aggregateId: caseId,
    producer: producer ?? def?.producer ?? 'coordinator',
    commandId: `e${seq}`,
    causationId: null,
    correlationId: 'corr',
    occurredAt: NOW,
    data: parsed,
    seq,
    subject: `t.case.${caseId}.${producer ?? def?.producer}`,
  } as RecordedEvent;
}

/** Records drafts (as the store would) so a test can build history from earlier decisions. */
export const record = (drafts: readonly EventDraft[], caseId = CASE_ID): RecordedEvent[] =>
  drafts.map((d) => recorded(d.type, d.data as never, undefined, caseId));

/** Given a case's history, when a command arrives: the decision on the history folded once. */
export const decideGiven = (
  command: CaseCommand,
  history: readonly RecordedEvent[],
  ctx: CaseContext,
): CaseDecision => decideCase(command, foldRecord(history), ctx);

export function decide(history: RecordedEvent[], command: CaseCommand, ctx: CaseContext): EventDraft[] {
  const d = decideGiven(command, history, ctx);
  if (!d.ok) throw new Error(`refused: ${d.code}: ${d.message}`);
  return d.events;
}

export const types = (drafts: readonly EventDraft[]): string[] => drafts.map((d) => d.type);
export const ofType = <T extends EventType>(drafts: readonly EventDraft[], type: T): EventData<T>[] =>
  drafts.filter((d) => d.type === type).map((d) => d.data as EventData<T>);

export const identity = { confidence: 0, reasons: ['no open case shares a term or signature'] };

export function check(
  kind: 'lint' | 'typecheck' | 'focused_test' | 'build',
  revision: string,
  outcome: 'passed' | 'failed' = 'passed',
) {
  return {
    name: kind,
    kind,
    outcome,
    revision,
    durationMs: 10,
    exitCode: outcome === 'passed' ? 0 : 1,
    outputSha256: null,
    outputBytes: 0,
  };
}
