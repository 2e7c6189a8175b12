import type { RecordedEvent } from '@caseloop/contracts';
import { DependencyUnavailable, EventStore, TransientError } from '@caseloop/ledger';
import { DISCORD_CODES, discordFailure, isDiscordCode } from '../discord/discord.errors';
import { DiscordRest } from '../discord/discord.rest';
import { IntakeLog } from '../ops/intake.metrics';
import { DeliveryOutbox } from '../outbox/delivery.outbox';
import { foldCaseStatus, renderCaseStatus, statusDeliveryId, statusPlaceholder } from './case-status';

export interface StatusUpdaterOptions {
  /**
   * The shortest time between two edits of one case's status. Discord limits message edits per
   * channel (a handful per few seconds); events that arrive closer together coalesce into one edit.
   */
  minEditIntervalMs: number;
}

interface CaseState {
  dirty: boolean;
  running: Promise<void> | null;
  lastEditAt: number;
  lastContent: string | null;
}

/**
 * Progress within a check run: frequent (a start and an end per check) and always followed by the
 * run's AttemptFinished or ChecksCompleted, which the status waits for. So they move the status
 * without holding the case's event handling for Discord's edit interval (`nudge`).
 */
export const PROGRESS_EVENTS = [
  'CheckStarted',
  'CheckFinished',
] as const satisfies readonly RecordedEvent['type'][];

/** The case events that move the live status. */
export const STATUS_EVENTS = [
  'TaskAssigned',
  'TaskResumed',
  'TaskCancelled',
  'AttemptStarted',
  ...PROGRESS_EVENTS,
  'AttemptFinished',
  'ChecksCompleted',
  'ClientValidationStarted',
  'ClientValidationCompleted',
  'ArtifactStored',
  'ReceiptBuilt',
  'CaseAwaitingReview',
  'CaseApproved',
  'CaseRejected',
] as const satisfies readonly RecordedEvent['type'][];

/**
 * One status message per case, in the thread of its first source, edited in place (PATCH) as the
 * case moves. Its first post goes through the outbox with fixed content (so a crash mid-post
 * reconciles like any chunk); every later change is an edit of that message, never a new post.
 * Edits are coalesced per case to stay inside Discord's edit rate limit; the handler resolves once
 * an edit covering its event was made, so a failed edit is retried by redelivery.
 */
export class StatusUpdater {
  readonly #cases = new Map<string, CaseState>();

  constructor(
    private readonly store: EventStore,
    private readonly outbox: DeliveryOutbox,
    private readonly rest: DiscordRest,
    private readonly log: IntakeLog,
    private readonly opts: StatusUpdaterOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A progress event arrived: bring the status up to date (coalesced) without waiting for the edit.
   * A failure is only logged; the run's closing event, which does wait, repairs it.
   */
  nudge(caseId: string): void {
    this.request(caseId).catch((e: unknown) =>
      this.log.warn(
        { caseId, err: e instanceof Error ? e.message.slice(0, 300) : String(e) },
        'live status progress not shown; the next case event brings it up to date',
      ),
    );
  }

  /** A case event arrived: bring the status up to date (coalesced). */
  request(caseId: string): Promise<void> {
    let st = this.#cases.get(caseId);
    if (!st) {
      st = { dirty: false, running: null, lastEditAt: 0, lastContent: null };
      this.#cases.set(caseId, st);
    }
    st.dirty = true;
    const state = st;
    state.running ??= this.#loop(caseId, state).finally(() => {
      state.running = null;
    });
    return state.running;
  }

  async #loop(caseId: string, st: CaseState): Promise<void> {
    while (st.dirty) {
      const wait = st.lastEditAt + this.opts.minEditIntervalMs - this.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      st.dirty = false;
      const edited = await this.#apply(caseId, st);
      if (edited) st.lastEditAt = this.now();
    }
  }

  /** True when Discord was written to. */
  async #apply(caseId: string, st: CaseState): Promise<boolean> {
    let { events } = await this.store.load('case', caseId);
    const status = foldCaseStatus(caseId, events);
    const opened = events.find((e): e is RecordedEvent<'CaseOpened'> => e.type === 'CaseOpened');
    // No status before there is work to follow, and none for a case this stream does not have.
    if (!status.task || !status.place || !opened) return false;
    const deliveryId = statusDeliveryId(caseId);
    let confirmed = findConfirmed(events, deliveryId);
    if (!confirmed) {
      if (events.some((e) => e.type === 'DeliveryRefused' && e.data.deliveryId === deliveryId)) return false;
      await this.outbox.deliver({
        caseId,
        deliveryId,
        sourceId: opened.data.sourceId,
        place: status.place,
        content: statusPlaceholder(caseId),
        causationId: null,
        correlationId: opened.data.sourceId,
        threadName: `Case ${caseId}`,
        kind: 'notice',
      });
      ({ events } = await this.store.load('case', caseId));
      confirmed = findConfirmed(events, deliveryId);
      if (!confirmed) return true;
      st.lastContent = statusPlaceholder(caseId);
    }
    const content = renderCaseStatus(foldCaseStatus(caseId, events));
    if (content === st.lastContent) return false;
    const channelId = confirmed.data.threadId ?? confirmed.data.channelId;
    try {
      await this.#edit(channelId, confirmed.data.threadId !== null, confirmed.data.discordMessageId, content);
    } catch (e) {
      const f = discordFailure(e);
      if (f.code === DISCORD_CODES.maxOldMessageEdits) {
        // 30046 says "try again later": the status is more than an hour old and Discord allows it
        // only so many edits for now. Left as it is, it would stay stale whenever no later event
        // comes; so the event is handled again (and held, like an outage) until the edit goes through.
        throw new DependencyUnavailable('discord', `status of ${caseId}: ${f.message}`, { cause: e });
      }
      if (f.status >= 400 && f.status < 500 && f.status !== 429) {
        // Deleted by a moderator, or the thread is locked: the status is a courtesy, not re-posted.
        this.log.warn({ caseId, status: f.status, code: f.code }, 'live status not editable; left as it is');
        st.lastContent = content;
        return true;
      }
      throw new TransientError(`status of ${caseId}: ${f.message}`, { cause: e });
    }
    st.lastContent = content;
    return true;
  }

  /**
   * Edits the status. Discord refuses an edit in an archived thread (50083) — it archives a case
   * thread after a week without messages — so an unlocked thread is reopened and the edit made
   * again; a thread a moderator locked is left as it is (the 50083 stands).
   */
  async #edit(channelId: string, inThread: boolean, messageId: string, content: string): Promise<void> {
    try {
      await this.rest.editMessage(channelId, messageId, content);
      return;
    } catch (e) {
      if (!inThread || !isDiscordCode(e, DISCORD_CODES.threadArchived)) throw e;
      const thread = await this.rest.channel(channelId);
      if (thread.thread_metadata?.locked === true) throw e;
    }
    await this.rest.unarchiveThread(channelId);
    await this.rest.editMessage(channelId, messageId, content);
  }
}

function findConfirmed(events: readonly RecordedEvent[], deliveryId: string) {
  return events.find(
    (e): e is RecordedEvent<'DeliveryConfirmed'> =>
      e.type === 'DeliveryConfirmed' && e.data.deliveryId === deliveryId,
  );
}
