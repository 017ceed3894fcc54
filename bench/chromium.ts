import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium package; never a browser of playwright's own (playwright-core downloads none). */
export const CHROMIUM = process.env['MEDIABATCH_CHROMIUM'] ?? '/usr/bin/chromium';

/**
 * Flags for a headless Chromium on a machine with no network: without the background-networking
 * ones it keeps trying to reach Google's hosts. Playwright gives each launch a fresh, empty
 * profile folder (--user-data-dir) and removes it on close. Media may play without a click.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];

/**
 * Starts headless Chromium (the browser tests' and the review page bench's). Missing, it throws
 * how to install it: a browser test never skips silently.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `headless Chromium is missing at ${CHROMIUM}; the browser tests and the review page bench need it. Install Debian's package: ` +
        'apt-get update && apt-get install -y chromium (as root; .ci/run does this), or set MEDIABATCH_CHROMIUM to a Chromium binary.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, chromiumSandbox: false, args: FLAGS });
}
