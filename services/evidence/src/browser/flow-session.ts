import type { Page } from 'playwright-core';
import type { HeldLease, LeaseStanding } from './lease.port';

/**
 * What a capture must be looking at. The origin is always the started app's. A page without a
 * `<title>` is named by `path` and `selector` instead: one of `title` and `path` is required.
 */
export interface PageIdentity {
  /** The document title, exactly. */
  title?: string;
  /** An element that must be visible on the page. */
  selector: string;
  /** The URL path, exactly (query and fragment are ignored). */
  path?: string;
}

/** What the screenshot shows: the viewport (default), the whole scrollable page, or one element. */
export interface CaptureOptions {
  expect: PageIdentity;
  fullPage?: boolean;
  /** A selector: the screenshot is that element's box only. */
  element?: string;
}

export interface StepOptions {
  timeoutMs?: number;
}

/**
 * The caseloop flow API: the only thing a repository's flow module receives.
 *
 * ```js
 * module.exports = async function flow(cl) {
 *   await cl.goto('/');
 *   await cl.click('#add');
 *   await cl.expectText('#total', '3');
 *   await cl.capture('total-updated', { expect: { title: 'Cart', selector: '#total' } });
 * };
 * ```
 * Before every call the lease on the browser is re-checked; before every capture the page's
 * identity is verified. After the first failure every further call fails the same way, so a flow
 * that catches an error cannot turn a failed phase into a passed one.
 */
export interface CaseloopFlowApi {
  readonly baseUrl: string;
  goto(path: string, options?: StepOptions): Promise<void>;
  click(selector: string, options?: StepOptions): Promise<void>;
  fill(selector: string, value: string, options?: StepOptions): Promise<void>;
  press(selector: string, key: string, options?: StepOptions): Promise<void>;
  selectOption(selector: string, value: string, options?: StepOptions): Promise<void>;
  waitFor(selector: string, options?: StepOptions): Promise<void>;
  expectText(selector: string, expected: string, options?: StepOptions): Promise<void>;
  expectVisible(selector: string, options?: StepOptions): Promise<void>;
  expectTitle(title: string, options?: StepOptions): Promise<void>;
  /** Takes a screenshot of the verified page (viewport, `fullPage` or one `element`); resolves to its capture id. */
  capture(name: string, options: CaptureOptions): Promise<string>;
}

export type FlowFailureKind = 'assertion' | 'lease_lost' | 'wrong_page' | 'usage' | 'browser';

export class FlowFailure extends Error {
  constructor(
    readonly kind: FlowFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'FlowFailure';
  }
}

export interface TakenCapture {
  captureId: string;
  step: string;
  page: { url: string; title: string };
  png: Buffer;
  leaseToken: number;
  takenAt: string;
  /** A screenshot of the page when an assertion failed, not a declared capture. */
  failure: boolean;
}

export interface VoidedCapture {
  captureId: string;
  step: string;
  reason: 'lease_expired' | 'lease_foreign' | 'wrong_page';
  detail: string;
}

export interface FlowSessionDeps {
  page: Page;
  lease: HeldLease;
  baseUrl: string;
  now: () => number;
  newCaptureId: () => string;
  /** Renew when less than this remains on the grant; a single step longer than the TTL loses it. */
  renewWithinMs: number;
  defaultTimeoutMs: number;
}

/**
 * The object a flow receives: the API methods and nothing else, frozen, so a flow cannot reach
 * the session's record of captures.
 */
export function flowApiOf(session: FlowSession): CaseloopFlowApi {
  return Object.freeze({
    baseUrl: session.baseUrl,
    goto: (path: string, o?: StepOptions) => session.goto(path, o),
    click: (selector: string, o?: StepOptions) => session.click(selector, o),
    fill: (selector: string, value: string, o?: StepOptions) => session.fill(selector, value, o),
    press: (selector: string, key: string, o?: StepOptions) => session.press(selector, key, o),
    selectOption: (selector: string, value: string, o?: StepOptions) =>
      session.selectOption(selector, value, o),
    waitFor: (selector: string, o?: StepOptions) => session.waitFor(selector, o),
    expectText: (selector: string, expected: string, o?: StepOptions) =>
      session.expectText(selector, expected, o),
    expectVisible: (selector: string, o?: StepOptions) => session.expectVisible(selector, o),
    expectTitle: (title: string, o?: StepOptions) => session.expectTitle(title, o),
    capture: (name: string, o: CaptureOptions) => session.capture(name, o),
  });
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9 _.:-]{0,99}$/;

export class FlowSession implements CaseloopFlowApi {
  readonly captures: TakenCapture[] = [];
  readonly voided: VoidedCapture[] = [];
  private failure: FlowFailure | null = null;
  private readonly origin: string;

  constructor(private readonly deps: FlowSessionDeps) {
    this.origin = new URL(deps.baseUrl).origin;
  }

  get baseUrl(): string {
    return this.deps.baseUrl;
  }

  /** The first failure of the flow, whatever the flow itself did with the error. */
  get failed(): FlowFailure | null {
    return this.failure;
  }

  /** Closes the session: later calls (from a flow that outlived its phase) fail. */
  end(reason: FlowFailure): void {
    this.failure ??= reason;
  }

  goto(path: string, options?: StepOptions): Promise<void> {
    return this.step(`goto ${path}`, async () => {
      const target = new URL(path, this.deps.baseUrl);
      if (target.origin !== this.origin) {
        throw new FlowFailure('usage', `goto leaves the app: ${target.origin} is not ${this.origin}`);
      }
      await this.deps.page.goto(target.toString(), { timeout: this.timeout(options), waitUntil: 'load' });
    });
  }

  click(selector: string, options?: StepOptions): Promise<void> {
    return this.step(`click ${selector}`, () =>
      this.deps.page.locator(selector).click({ timeout: this.timeout(options) }),
    );
  }

  fill(selector: string, value: string, options?: StepOptions): Promise<void> {
    return this.step(`fill ${selector}`, () =>
      this.deps.page.locator(selector).fill(value, { timeout: this.timeout(options) }),
    );
  }

  press(selector: string, key: string, options?: StepOptions): Promise<void> {
    return this.step(`press ${key} in ${selector}`, () =>
      this.deps.page.locator(selector).press(key, { timeout: this.timeout(options) }),
    );
  }

  selectOption(selector: string, value: string, options?: StepOptions): Promise<void> {
    return this.step(`select ${value} in ${selector}`, async () => {
      await this.deps.page.locator(selector).selectOption(value, { timeout: this.timeout(options) });
    });
  }

  waitFor(selector: string, options?: StepOptions): Promise<void> {
    return this.step(`wait for ${selector}`, () =>
      this.deps.page
        .locator(selector)
        .first()
        .waitFor({ state: 'visible', timeout: this.timeout(options) }),
    );
  }

  expectVisible(selector: string, options?: StepOptions): Promise<void> {
    return this.step(`expect ${selector} visible`, async () => {
      const visible = await this.poll(options, () => this.deps.page.locator(selector).first().isVisible());
      if (!visible) throw new FlowFailure('assertion', `${selector} is not visible`);
    });
  }

  expectText(selector: string, expected: string, options?: StepOptions): Promise<void> {
    return this.step(`expect ${selector} to read ${JSON.stringify(expected)}`, async () => {
      let actual: string | null = null;
      const ok = await this.poll(options, async () => {
        const el = this.deps.page.locator(selector).first();
        actual = (await el.count()) > 0 ? ((await el.textContent({ timeout: 1000 })) ?? '').trim() : null;
        return actual === expected;
      });
      if (!ok) {
        const shown = actual === null ? 'no such element' : JSON.stringify(String(actual).slice(0, 200));
        throw new FlowFailure(
          'assertion',
          `${selector}: expected ${JSON.stringify(expected)}, found ${shown}`,
        );
      }
    });
  }

  expectTitle(title: string, options?: StepOptions): Promise<void> {
    return this.step(`expect title ${JSON.stringify(title)}`, async () => {
      let actual = '';
      const ok = await this.poll(options, async () => (actual = await this.deps.page.title()) === title);
      if (!ok)
        throw new FlowFailure(
          'assertion',
          `title: expected ${JSON.stringify(title)}, found ${JSON.stringify(actual)}`,
        );
    });
  }

  async capture(name: string, options: CaptureOptions): Promise<string> {
    this.throwIfFailed();
    const expect = options?.expect;
    if (
      !NAME.test(name) ||
      !expect?.selector ||
      (!expect.title && !expect.path) ||
      (options.fullPage && options.element)
    ) {
      this.fail(
        new FlowFailure(
          'usage',
          'capture(name, { expect: { selector, title and/or path }, fullPage? | element? }) with a plain name',
        ),
      );
    }
    const captureId = this.deps.newCaptureId();
    const before = await this.ensureLease();
    if (before !== 'held') {
      this.voidCapture(captureId, name, before, 'the lease no longer stood when the capture was due');
      this.fail(new FlowFailure('lease_lost', `lease ${before} before capture ${name}`));
    }
    const mismatch = await this.identityMismatch(options.expect);
    if (mismatch) {
      this.voided.push({ captureId, step: name, reason: 'wrong_page', detail: mismatch });
      this.fail(new FlowFailure('wrong_page', `capture ${name} refused: ${mismatch}`));
    }
    await this.take(captureId, name, false, options);
    return captureId;
  }

  /**
   * A screenshot of the page as the flow failed, taken only while the lease still stands: it is
   * what the reviewer needs to see why the client claim failed.
   */
  async captureFailure(): Promise<TakenCapture | null> {
    if (this.failure?.kind !== 'assertion' || this.deps.page.isClosed()) return null;
    if ((await this.deps.lease.check()) !== 'held') return null;
    const captureId = this.deps.newCaptureId();
    try {
      return await this.take(captureId, 'assertion-failed', true);
    } catch {
      return null;
    }
  }

  private async take(
    captureId: string,
    step: string,
    failure: boolean,
    shape: Pick<CaptureOptions, 'fullPage' | 'element'> = {},
  ): Promise<TakenCapture> {
    const page = this.deps.page;
    const timeout = this.deps.defaultTimeoutMs;
    let png: Buffer;
    if (shape.element) {
      const el = page.locator(shape.element).first();
      if ((await el.count()) === 0) {
        const err = new FlowFailure('assertion', `capture ${step}: no element ${shape.element} to capture`);
        this.fail(err);
      }
      png = await el.screenshot({ type: 'png', timeout });
    } else {
      png = await page.screenshot({ type: 'png', timeout, fullPage: shape.fullPage === true });
    }
    const takenAt = new Date(this.deps.now()).toISOString();
    const url = new URL(page.url());
    const shot = {
      url: `${url.origin}${url.pathname}`.slice(0, 2048),
      title: (await page.title()).slice(0, 500),
    };
    // Bound after the pixels exist: a grant that lapsed while the screenshot was taken voids it.
    const after = await this.deps.lease.bindCapture(captureId);
    if (after !== 'held') {
      this.voidCapture(captureId, step, after, 'the lease lapsed while the screenshot was taken');
      if (!failure) this.fail(new FlowFailure('lease_lost', `lease ${after} during capture ${step}`));
      throw new FlowFailure('lease_lost', `lease ${after} during capture ${step}`);
    }
    const taken: TakenCapture = {
      captureId,
      step,
      page: shot,
      png,
      leaseToken: this.deps.lease.token,
      takenAt,
      failure,
    };
    this.captures.push(taken);
    return taken;
  }

  private async identityMismatch(expect: PageIdentity): Promise<string | null> {
    const page = this.deps.page;
    if (page.isClosed()) return 'the page is closed';
    const url = new URL(page.url());
    if (url.origin !== this.origin) return `the page is on ${url.origin}, not the app`;
    if (expect.path !== undefined && url.pathname !== expect.path)
      return `the page is ${url.pathname}, not ${expect.path}`;
    if (expect.title !== undefined) {
      const title = await page.title();
      if (title !== expect.title)
        return `the title is ${JSON.stringify(title.slice(0, 100))}, not ${JSON.stringify(expect.title)}`;
    }
    if (!(await page.locator(expect.selector).first().isVisible()))
      return `${expect.selector} is not visible`;
    const visibility = await page.evaluate('document.visibilityState');
    if (visibility !== 'visible') return `the page is ${visibility}`;
    return null;
  }

  private async step(what: string, action: () => Promise<unknown>): Promise<void> {
    this.throwIfFailed();
    const standing = await this.ensureLease();
    if (standing !== 'held') this.fail(new FlowFailure('lease_lost', `lease ${standing} before "${what}"`));
    try {
      await action();
    } catch (e) {
      if (e instanceof FlowFailure) this.fail(e);
      const message = (e as Error)?.message?.split('\n')[0] ?? String(e);
      const kind: FlowFailureKind = /Target (page|closed)|browser has been closed/i.test(message)
        ? 'browser'
        : 'assertion';
      this.fail(new FlowFailure(kind, `${what}: ${message.slice(0, 300)}`));
    }
  }

  private async ensureLease(): Promise<LeaseStanding> {
    const lease = this.deps.lease;
    const standing = await lease.check();
    if (standing !== 'held') return standing;
    if (lease.expiresAt() - this.deps.now() < this.deps.renewWithinMs) return lease.renew();
    return standing;
  }

  private voidCapture(
    captureId: string,
    step: string,
    standing: Exclude<LeaseStanding, 'held'>,
    detail: string,
  ): void {
    this.voided.push({
      captureId,
      step,
      reason: standing === 'expired' ? 'lease_expired' : 'lease_foreign',
      detail,
    });
  }

  private async poll(options: StepOptions | undefined, probe: () => Promise<boolean>): Promise<boolean> {
    const deadline = this.deps.now() + this.timeout(options);
    for (;;) {
      if (await probe()) return true;
      if (this.deps.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private timeout(options: StepOptions | undefined): number {
    const t = options?.timeoutMs;
    return typeof t === 'number' && t > 0 && t <= 120_000 ? t : this.deps.defaultTimeoutMs;
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  private fail(failure: FlowFailure): never {
    this.failure ??= failure;
    throw this.failure;
  }
}
