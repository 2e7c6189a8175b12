import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { Browser, chromium } from 'playwright-core';

export interface BrowserSettings {
  executablePath: string;
  args: string[];
  launchTimeoutMs: number;
}

export const DEFAULT_CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-gpu'];

export class BrowserUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrowserUnavailableError';
  }
}

/** The system Chromium driven by playwright-core. One fresh headless browser per client phase. */
export class ChromiumBrowser {
  constructor(private readonly settings: BrowserSettings) {}

  /** Cheap, before anything is started: a missing browser blocks the phase with a clear reason. */
  async assertInstalled(): Promise<void> {
    try {
      await access(this.settings.executablePath, constants.X_OK);
    } catch {
      throw new BrowserUnavailableError(`no executable browser at ${this.settings.executablePath}`);
    }
  }

  async launch(): Promise<Browser> {
    await this.assertInstalled();
    try {
      return await chromium.launch({
        executablePath: this.settings.executablePath,
        args: this.settings.args,
        headless: true,
        timeout: this.settings.launchTimeoutMs,
        // The app under test gets a clean environment; so does the browser.
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
      });
    } catch (e) {
      throw new BrowserUnavailableError(
        `the browser did not start: ${((e as Error)?.message ?? String(e)).split('\n')[0]}`,
      );
    }
  }
}
