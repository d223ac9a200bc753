import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';

/** Debian's Chromium (scripts/dev/system-deps.sh installs it); CHROMIUM_PATH names another. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Flags of a quiet headless Chromium: without the background-networking ones it tries to reach
 * its vendor's update and sync services at start, which a test machine must not (and cannot).
 */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface TestBrowser {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/**
 * A headless Chromium driven by playwright-core, with a fresh profile of its own (nothing shared
 * with another run or a person's browser). playwright-core is loaded only here, so the test kit
 * costs the tests that do not use a browser nothing.
 */
export async function launchChromium(opts: { width?: number; height?: number } = {}): Promise<TestBrowser> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'chainpipe-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: opts.width ?? 1200, height: opts.height ?? 700 },
    });
    return {
      context,
      close: async () => {
        await context.close().catch(() => undefined);
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}
