import {
  IMPROVEMENTS_AGGREGATE_ID,
  OPS_FINDINGS_AGGREGATE_ID,
  RecordedEvent,
  ulidFrom,
} from '@caseloop/contracts';
import { DeadLetter, directGet, isNoMessage, Ledger, listConsumerDeadLetters } from '@caseloop/ledger';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import {
  DeadLetterRef,
  detectFindings,
  findingId,
  FindingKind,
  improvementCandidates,
  MonitorPolicy,
  nextRecheckAt,
  projectionDeadLetterFinding,
  ProjectionDeadLetterRef,
} from '../findings/findings.rules';
import { LiveCasesReader } from './live-cases.reader';
import { ProjectionDeadLettersReader, watermarkKey } from './projection-dead-letters.reader';
import { Look, selectForDeepRead } from './live-set';

export interface HeartbeatOptions {
  intervalMs: number;
  policy: MonitorPolicy;
  /** Window and threshold for improvement candidates. */
  candidateWindowMs: number;
  candidateMinCases: number;
}

export const HEARTBEAT_OPTIONS = Symbol('HEARTBEAT_OPTIONS');
export const MONITOR_LOGGER = Symbol('MONITOR_LOGGER');

export { IMPROVEMENTS_AGGREGATE_ID, OPS_FINDINGS_AGGREGATE_ID };
/** Projection dead letters read per projection and beat: a burst is reported over several beats. */
const PROJECTION_LETTERS_PER_BEAT = 200;

export interface BeatSummary {
  live: number;
  deepRead: number;
  /** Every finding recorded at this beat, projection dead letters included. */
  findings: number;
  /** Of those, projection dead letters (on their cases or on the ops aggregate). */
  projectionDeadLetters: number;
  candidates: number;
}

/**
 * The monitor's heartbeat: rebuild the live set from the projection, deep-read only what is new,
 * changed, due or dead-lettered, and append findings addressed to the owning service. It appends
 * nothing when nothing material changed, and it never acts on a case itself.
 */
@Injectable()
export class MonitorHeartbeat implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly looks = new Map<string, Look>();
  private readonly recent: { caseId: string; kind: FindingKind; at: string }[] = [];
  private readonly reportedDeadLetters = new Set<string>();
  private readonly deadLetters = new Map<string, DeadLetterRef[]>();
  private nextDeadLetterSeq = 1;
  /**
   * Per projection version, the last dead letter handled (reported, or found reported already).
   * Empty after a start: every open letter is read once and checked against the findings recorded.
   */
  private readonly projectionWatermarks = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<BeatSummary> | null = null;
  private readonly findingsCounter: Counter;

  constructor(
    private readonly ledger: Ledger,
    private readonly live: LiveCasesReader,
    private readonly projectionLetters: ProjectionDeadLettersReader,
    @Inject(HEARTBEAT_OPTIONS) private readonly opts: HeartbeatOptions,
    @Inject(MONITOR_LOGGER) private readonly log: Logger,
    registry: Registry,
  ) {
    this.findingsCounter = new Counter({
      name: 'caseloop_monitor_findings_total',
      help: 'Findings the monitor recorded, by kind',
      labelNames: ['kind'],
      registers: [registry],
    });
  }

  onApplicationBootstrap(): void {
    if (this.opts.intervalMs <= 0) return;
    const tick = () => {
      this.beat().catch((e: unknown) =>
        this.log.warn({ err: (e as Error).message }, 'heartbeat failed; next beat retries'),
      );
    };
    this.timer = setInterval(tick, this.opts.intervalMs);
    this.timer.unref();
    tick();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One heartbeat; concurrent calls share the beat in progress. */
  beat(now: Date = new Date()): Promise<BeatSummary> {
    this.running ??= this.runBeat(now).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async runBeat(now: Date): Promise<BeatSummary> {
    const live = await this.live.liveCases();
    const deadByCase = await this.deadLettersByCase();
    const unreported = new Set(
      [...deadByCase.entries()]
        .filter(([, dls]) => dls.some((d) => !this.reportedDeadLetters.has(dlKey(d))))
        .map(([id]) => id),
    );
    const selected = selectForDeepRead(live, this.looks, now.getTime(), unreported);
    let recorded = 0;
    for (const { caseId } of selected)
      recorded += await this.deepRead(caseId, now, deadByCase.get(caseId) ?? []);
    const liveIds = new Set(live.map((c) => c.caseId));
    for (const id of this.looks.keys()) if (!liveIds.has(id)) this.looks.delete(id);
    const projectionDeadLetters = await this.recordProjectionDeadLetters(now);
    recorded += projectionDeadLetters;
    const candidates = await this.recordCandidates(now);
    const summary: BeatSummary = {
      live: live.length,
      deepRead: selected.length,
      findings: recorded,
      projectionDeadLetters,
      candidates,
    };
    if (selected.length || recorded || candidates) this.log.debug(summary, 'heartbeat');
    return summary;
  }

  private async deepRead(caseId: string, now: Date, deadLetters: DeadLetterRef[]): Promise<number> {
    const { events, lastSeq } = await this.ledger.store.load('case', caseId, { undecodable: 'skip' });
    const fresh = deadLetters.filter((d) => !this.reportedDeadLetters.has(dlKey(d)));
    const recorded = new Set(events.flatMap((e) => (e.type === 'FindingRecorded' ? [e.data.findingId] : [])));
    const findings = detectFindings(events, now, this.opts.policy, fresh).filter(
      (f) => !recorded.has(findingId(caseId, f)),
    );
    let seq = lastSeq;
    for (const f of findings) {
      const id = findingId(caseId, f);
      const { kind, owner, detail, observedSeq } = f;
      const { seqs } = await this.ledger.store.append({
        aggregate: 'case',
        aggregateId: caseId,
        producer: 'monitor',
        events: [{ type: 'FindingRecorded', data: { findingId: id, kind, owner, detail, observedSeq } }],
        commandId: id,
        causationId: null,
        correlationId: caseId,
        occurredAt: now.toISOString(),
      });
      seq = Math.max(seq, ...seqs);
      this.findingsCounter.inc({ kind: f.kind });
      this.recent.push({ caseId, kind: f.kind, at: now.toISOString() });
      this.log.info({ caseId, kind: f.kind, owner: f.owner }, 'finding');
    }
    for (const d of fresh) this.reportedDeadLetters.add(dlKey(d));
    // Every letter of the case is reported now; the keys alone keep a late copy from counting again.
    this.deadLetters.delete(caseId);
    this.looks.set(caseId, { lastSeq: seq, recheckAt: nextRecheckAt(events, now, this.opts.policy) });
    return findings.length;
  }

  /**
   * Dead letters are immutable facts: each heartbeat reads only those added since the last one
   * (from the dead-letter stream's next sequence) and keeps those not yet reported, per case.
   * A consumer's own record and the server's MSG_TERMINATED advisory for the same message are one
   * letter (the record, which carries the reason, counts when both are seen before it is reported).
   */
  private async deadLettersByCase(): Promise<Map<string, DeadLetterRef[]>> {
    let letters: DeadLetter[];
    try {
      letters = await listConsumerDeadLetters(this.ledger.jsm, this.ledger.stream, {
        fromSeq: this.nextDeadLetterSeq,
      });
    } catch {
      return this.deadLetters;
    }
    for (const dl of letters) {
      let subject: string;
      try {
        subject = (await directGet(this.ledger.jsm, this.ledger.stream, { seq: dl.streamSeq })).subject;
      } catch (e) {
        // Not readable now: this letter and those after it are read again at the next beat.
        if (!isNoMessage(e)) break;
        subject = '';
      }
      this.nextDeadLetterSeq = Math.max(this.nextDeadLetterSeq, dl.dlqSeq + 1);
      const [, aggregate, id, producer] = subject.split('.');
      if (aggregate !== 'case' || !id) continue;
      const owner = (dl.consumer.split('-')[0] ?? producer) as DeadLetterRef['owner'];
      const ref: DeadLetterRef = {
        seq: dl.streamSeq,
        consumer: dl.consumer,
        owner: isOwner(owner) ? owner : 'coordinator',
        reason: dl.reason ?? dl.code ?? dl.source,
      };
      if (this.reportedDeadLetters.has(dlKey(ref))) continue;
      const list = this.deadLetters.get(id) ?? [];
      const known = list.findIndex((d) => dlKey(d) === dlKey(ref));
      if (known < 0) list.push(ref);
      else if (dl.source === 'record') list[known] = ref;
      this.deadLetters.set(id, list);
    }
    return this.deadLetters;
  }

  /**
   * Projection dead letters (messages a live projection could not decode, so its read model lacks
   * them): each open letter of a projection's active version becomes one finding for the monitor,
   * on its case or on the ops aggregate. A beat reads only the letters past each version's watermark;
   * a re-driven letter is no longer open and is not read. Whether a letter was reported already is
   * decided by the findings recorded on its target, so a restart (empty watermarks) repeats none.
   */
  private async recordProjectionDeadLetters(now: Date): Promise<number> {
    const known = new Map<string, Set<string>>();
    let recorded = 0;
    try {
      const letters = await this.projectionLetters.openSince(
        this.projectionWatermarks,
        PROJECTION_LETTERS_PER_BEAT,
      );
      for (const dl of letters) {
        if (await this.reportProjectionDeadLetter(dl, known, now)) recorded++;
        this.projectionWatermarks.set(watermarkKey(dl.projection, dl.version), dl.seq);
      }
    } catch (e) {
      // The letters not handled yet stay past the watermark: the next beat reads them again.
      this.log.warn({ err: (e as Error).message }, 'projection dead letters not reported; next beat retries');
    }
    return recorded;
  }

  /**
   * One finding for the letter, unless its target (case or ops) holds it already. `known` keeps the
   * finding ids read from each target during this beat, so a target is read once a beat.
   */
  private async reportProjectionDeadLetter(
    dl: ProjectionDeadLetterRef,
    known: Map<string, Set<string>>,
    now: Date,
  ): Promise<boolean> {
    const { target, findingId: id, finding } = projectionDeadLetterFinding(dl);
    const [aggregate, aggregateId] =
      target.aggregate === 'case'
        ? (['case', target.caseId] as const)
        : (['ops', OPS_FINDINGS_AGGREGATE_ID] as const);
    const key = `${aggregate}.${aggregateId}`;
    let ids = known.get(key);
    if (!ids) {
      // Only the monitor's own subject of the target: its findings, and nothing a poison message can break.
      const { events } = await this.ledger.store.load(aggregate, aggregateId, {
        producer: 'monitor',
        undecodable: 'skip',
      });
      ids = new Set(
        events.flatMap((e) =>
          e.type === 'FindingRecorded' || e.type === 'OpsFindingRecorded' ? [e.data.findingId] : [],
        ),
      );
      known.set(key, ids);
    }
    if (ids.has(id)) return false;
    const { kind, owner, detail, observedSeq } = finding;
    const data = { findingId: id, kind, owner, detail, observedSeq };
    await this.ledger.store.append({
      aggregate,
      aggregateId,
      producer: 'monitor',
      events: [
        aggregate === 'case' ? { type: 'FindingRecorded', data } : { type: 'OpsFindingRecorded', data },
      ],
      commandId: id,
      causationId: null,
      correlationId: aggregateId,
      occurredAt: now.toISOString(),
    });
    ids.add(id);
    this.findingsCounter.inc({ kind });
    if (aggregate === 'case') this.recent.push({ caseId: aggregateId, kind, at: now.toISOString() });
    const { projection, version, seq, code } = dl;
    this.log.warn(
      { aggregate, aggregateId, kind, owner, projection, version, seq, code },
      'finding: projection dead letter',
    );
    return true;
  }

  private async recordCandidates(now: Date): Promise<number> {
    const start = new Date(now.getTime() - this.opts.candidateWindowMs);
    while (this.recent.length && Date.parse((this.recent[0] as { at: string }).at) < start.getTime())
      this.recent.shift();
    const found = improvementCandidates(this.recent, { start, end: now }, this.opts.candidateMinCases);
    if (!found.length) return 0;
    const { events } = await this.ledger.store.load('ops', IMPROVEMENTS_AGGREGATE_ID);
    let recorded = 0;
    for (const c of found) {
      const known = events.some(
        (e: RecordedEvent) =>
          e.type === 'ImprovementCandidateRecorded' &&
          e.data.kind === c.kind &&
          Date.parse(e.data.windowEnd) >= start.getTime() &&
          c.caseIds.every((id) => e.data.caseIds.includes(id)),
      );
      if (known) continue;
      await this.ledger.store.append({
        aggregate: 'ops',
        aggregateId: IMPROVEMENTS_AGGREGATE_ID,
        producer: 'monitor',
        events: [
          {
            type: 'ImprovementCandidateRecorded',
            data: {
              candidateId: `I${ulidFrom(now.getTime(), randomBytes(10))}`,
              kind: c.kind,
              caseIds: c.caseIds,
              windowStart: start.toISOString(),
              windowEnd: now.toISOString(),
              summary: `${c.kind.replace(/_/g, ' ')} recurred in ${c.caseIds.length} cases within ${Math.round(this.opts.candidateWindowMs / 3_600_000)} h`,
            },
          },
        ],
        commandId: `improvement-${c.kind}-${c.caseIds.join('-')}`.slice(0, 200),
        causationId: null,
        correlationId: IMPROVEMENTS_AGGREGATE_ID,
        occurredAt: now.toISOString(),
      });
      recorded++;
    }
    return recorded;
  }
}

const OWNERS = ['intake', 'coordinator', 'worker', 'lease', 'evidence', 'monitor'] as const;
const isOwner = (v: string): v is DeadLetterRef['owner'] => (OWNERS as readonly string[]).includes(v);
const dlKey = (d: DeadLetterRef): string => `${d.consumer}:${d.seq}`;
