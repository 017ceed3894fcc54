/**
 * Headless Chromium for the browser tests: Debian's package driven by playwright-core, one
 * browser per test file (launch it in beforeAll, close it in afterAll). The launcher lives in
 * bench/ because the review page bench, built to dist/, starts the same browser the same way.
 */
export { CHROMIUM, launchChromium } from '../../bench/chromium.js';
