import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { BrowserUnavailableError, ChromiumBrowser } from './chromium.browser';
import { FlowFailure, flowApiOf, FlowSession, TakenCapture, VoidedCapture } from './flow-session';
import { FlowFunction, FlowLoadError, loadFlow } from './flow.loader';
import { HeldLease, LeasePort, LeaseUnavailableError } from './lease.port';
import { appEnvironment, RunningTargetApp, startTargetApp, TargetAppError } from './target-app.process';

export interface ClientSpecInput {
  start: string[];
  url: string;
  /** A fixed port the app listens on (started only under the lease); otherwise a free one as $PORT. */
  port?: number | undefined;
  readyPath?: string | undefined;
  /** Relative to the worktree. */
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
  /** Absolute path of the flow module. */
  flow: string;
  fixtureData: boolean;
}

export interface ClientPhaseInput {
  caseId: string;
  taskId: string;
  revision: string;
  worktree: string;
  client: ClientSpecInput;
  /** The repository's `env`: the client runs with it too (under its own `client.env`). */
  repositoryEnv?: Record<string, string> | undefined;
  resource: string;
}

export interface ClientPhaseSettings {
  leaseTtlMs: number;
  leaseWaitMs: number;
  renewWithinMs: number;
  readyTimeoutMs: number;
  stepTimeoutMs: number;
  flowTimeoutMs: number;
  viewport: { width: number; height: number };
  /** Record a Playwright trace of the flow (DOM snapshots and screenshots) as one more artifact. */
  trace: boolean;
  /** The package cache the repository's setup steps ran with; the client is started with it too. */
  cacheDir?: string;
  /** The app's output as it comes, for an operator's terminal only (`startTargetApp`'s onOutput). */
  appOutput?: (text: string) => void;
}

export type ClientPhaseOutcome = 'passed' | 'failed' | 'blocked';

export interface ClientPhaseResult {
  flow: string;
  resource: string;
  leaseToken: number | null;
  outcome: ClientPhaseOutcome;
  reason: string | null;
  /** Valid captures only; anything void is in `voided`. */
  captures: TakenCapture[];
  voided: VoidedCapture[];
  /** The Playwright trace (a zip) of the flow, when traces are on and the browser ran. */
  trace: Buffer | null;
}

export interface ClientPhaseClock {
  now: () => number;
  newCaptureId: () => string;
}

/** `caseloop/flow.js`: the flow as the receipt names it. */
export const flowName = (file: string): string => `${basename(dirname(file))}/${basename(file)}`.slice(-100);

/**
 * One client phase: start the app from the worktree, queue for the browser lease, drive the
 * declared flow in a fresh Chromium, release the lease with the captures it covered, stop the app.
 * Every way it can end is a result, never an exception: passed, failed (with the failure
 * screenshot) or blocked (with the reason).
 */
export class ClientValidationRunner {
  constructor(
    private readonly browser: ChromiumBrowser,
    private readonly leases: LeasePort,
    private readonly settings: ClientPhaseSettings,
    private readonly clock: ClientPhaseClock,
    private readonly hostEnv: NodeJS.ProcessEnv = process.env,
  ) {}

  async run(input: ClientPhaseInput): Promise<ClientPhaseResult> {
    const base = { flow: flowName(input.client.flow), resource: input.resource };
    const blocked = (reason: string, leaseToken: number | null = null): ClientPhaseResult => ({
      ...base,
      leaseToken,
      outcome: 'blocked',
      reason,
      captures: [],
      voided: [],
      trace: null,
    });

    let flow: FlowFunction;
    try {
      flow = await loadFlow(input.client.flow);
      await this.browser.assertInstalled();
    } catch (e) {
      if (e instanceof FlowLoadError || e instanceof BrowserUnavailableError) return blocked(e.message);
      throw e;
    }

    const first = await this.attempt(input, flow, blocked);
    if (!first.rerun) return first.result;
    // The grant was lost while the lease service could not be reached (a restart outlasting it):
    // that says nothing about the change, so the flow runs once more, from a fresh app, under a new
    // grant. What the first run voided stays on the record.
    const second = await this.attempt(input, flow, blocked);
    return { ...second.result, voided: [...first.result.voided, ...second.result.voided] };
  }

  /**
   * Starts the app, holds the lease, drives the flow once. `rerun`: the flow lost its grant after a
   * lease call met an outage of the lease service.
   */
  private async attempt(
    input: ClientPhaseInput,
    flow: FlowFunction,
    blocked: (reason: string, leaseToken?: number | null) => ClientPhaseResult,
  ): Promise<{ result: ClientPhaseResult; rerun: boolean }> {
    const base = { flow: flowName(input.client.flow), resource: input.resource };
    const done = (result: ClientPhaseResult) => ({ result, rerun: false });
    // A fixed port can serve one app at a time: such an app starts only once the lease is held.
    const fixed = input.client.port !== undefined;
    let app: RunningTargetApp | null = null;
    const startApp = async (leaseToken: number | null): Promise<ClientPhaseResult | null> => {
      try {
        app = await startTargetApp({
          cwd: appDirectory(input.worktree, input.client.cwd),
          argv: input.client.start,
          url: input.client.url,
          ...(fixed ? { fixedPort: input.client.port } : {}),
          readyPath: input.client.readyPath,
          readyTimeoutMs: this.settings.readyTimeoutMs,
          ...(this.settings.appOutput ? { onOutput: this.settings.appOutput } : {}),
          env: appEnvironment(this.hostEnv, input.client.env ?? {}, {
            ...(this.settings.cacheDir ? { cacheDir: this.settings.cacheDir } : {}),
            ...(input.repositoryEnv ? { repositoryEnv: input.repositoryEnv } : {}),
          }),
        });
        return null;
      } catch (e) {
        if (e instanceof TargetAppError)
          return blocked(`the app could not be started: ${e.message}`, leaseToken);
        throw e;
      }
    };

    if (!fixed) {
      const failed = await startApp(null);
      if (failed) return done(failed);
    }
    try {
      let lease: HeldLease;
      try {
        lease = await this.leases.acquire({
          resource: input.resource,
          caseId: input.caseId,
          taskId: input.taskId,
          revision: input.revision,
          ttlMs: this.settings.leaseTtlMs,
          waitMs: this.settings.leaseWaitMs,
        });
      } catch (e) {
        if (e instanceof LeaseUnavailableError)
          return done(blocked(`${input.resource} was not granted: ${e.message}`));
        throw e;
      }
      let session: FlowSession | null = null;
      try {
        if (fixed) {
          const failed = await startApp(lease.token);
          if (failed) return done(failed);
        }
        const baseUrl = (app as RunningTargetApp | null)?.baseUrl as string;
        let browser: Browser;
        try {
          browser = await this.browser.launch();
        } catch (e) {
          if (e instanceof BrowserUnavailableError) return done(blocked(e.message, lease.token));
          throw e;
        }
        try {
          const context = await browser.newContext({
            viewport: this.settings.viewport,
            acceptDownloads: false,
          });
          if (this.settings.trace) await context.tracing.start({ screenshots: true, snapshots: true });
          const page = await context.newPage();
          session = new FlowSession({
            page,
            lease,
            baseUrl,
            now: this.clock.now,
            newCaptureId: this.clock.newCaptureId,
            renewWithinMs: this.settings.renewWithinMs,
            defaultTimeoutMs: this.settings.stepTimeoutMs,
          });
          const thrown = await this.drive(flow, session);
          const result = await this.conclude(base, lease, session, thrown);
          const rerun = session.failed?.kind === 'lease_lost' && lease.interrupted;
          return {
            result: this.settings.trace ? { ...result, trace: await traceOf(context) } : result,
            rerun,
          };
        } finally {
          await browser.close().catch(() => undefined);
        }
      } finally {
        const covered = session ? session.captures.map((c) => c.captureId) : [];
        // A fixed-port app stops before its port is released with the lease.
        if (fixed) await (app as RunningTargetApp | null)?.stop();
        // A lapsed grant cannot be released; the lease service records its expiry itself.
        await lease.release(covered).catch(() => undefined);
      }
    } finally {
      await (app as RunningTargetApp | null)?.stop();
    }
  }

  /** Runs the flow to its end or the phase deadline; returns what the flow itself threw, if anything. */
  private async drive(flow: FlowFunction, session: FlowSession): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.settings.flowTimeoutMs);
    });
    try {
      const outcome = await Promise.race([
        Promise.resolve()
          .then(() => flow(flowApiOf(session)))
          .then(
            () => null,
            (e: unknown) => e ?? new Error('the flow rejected without a reason'),
          ),
        deadline,
      ]);
      if (outcome === 'timeout') {
        session.end(
          new FlowFailure('usage', `the flow did not finish within ${this.settings.flowTimeoutMs} ms`),
        );
        return null;
      }
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  private async conclude(
    base: { flow: string; resource: string },
    lease: HeldLease,
    session: FlowSession,
    thrown: unknown,
  ): Promise<ClientPhaseResult> {
    const result = (outcome: ClientPhaseOutcome, reason: string | null): ClientPhaseResult => ({
      ...base,
      leaseToken: lease.token,
      outcome,
      reason,
      captures: [...session.captures],
      voided: [...session.voided],
      trace: null,
    });
    const failure = session.failed;
    if (failure) {
      if (failure.kind === 'assertion') await session.captureFailure();
      if (failure.kind === 'browser') return result('blocked', `the browser went away: ${failure.message}`);
      return result('failed', describe(failure, session.voided.length));
    }
    if (thrown !== null && thrown !== undefined) {
      const message = ((thrown as Error)?.message ?? String(thrown)).split('\n')[0]?.slice(0, 300);
      return result('failed', `the flow threw: ${message}`);
    }
    if (session.voided.length > 0) return result('failed', `${session.voided.length} capture(s) are void`);
    if (session.captures.length === 0)
      return result('failed', 'the flow finished without a capture: nothing proves it ran');
    return result('passed', null);
  }
}

/** The client's directory inside the worktree (the schema refuses `..` and absolute paths). */
function appDirectory(worktree: string, cwd: string | undefined): string {
  const root = resolve(worktree);
  const dir = cwd ? resolve(root, cwd) : root;
  return dir === root || dir.startsWith(`${root}${sep}`) ? dir : root;
}

async function traceOf(context: BrowserContext): Promise<Buffer | null> {
  const dir = await mkdtemp(join(tmpdir(), 'caseloop-trace-'));
  try {
    const path = join(dir, 'trace.zip');
    await context.tracing.stop({ path });
    return await readFile(path);
  } catch {
    return null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function describe(failure: FlowFailure, voided: number): string {
  switch (failure.kind) {
    case 'lease_lost':
      return `the browser lease did not hold through the flow (${failure.message}); ${voided} capture(s) void`;
    case 'wrong_page':
      return failure.message;
    case 'assertion':
      return `assertion failed: ${failure.message}`;
    case 'usage':
      return `the flow is invalid: ${failure.message}`;
    case 'browser':
      return failure.message;
  }
}
