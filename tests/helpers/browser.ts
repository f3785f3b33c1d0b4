/**
 * Headless Chromium for the browser suite, driven by playwright-core.
 *
 * The system's Chromium is used (Debian's /usr/bin/chromium, or CHROMIUM_PATH):
 * no browser is ever downloaded. One browser serves the whole run; each test
 * opens its own context (cookies, viewport, language) and closes it.
 */

import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
} from 'playwright-core'

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** A phone in portrait, as most customers open payment_url. */
export const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
  locale: 'th-TH',
}

let launching: Promise<Browser> | undefined

export function chromiumPath() {
  return process.env.CHROMIUM_PATH || '/usr/bin/chromium'
}

/** The shared browser, launched on first use. */
export function browser(): Promise<Browser> {
  launching ??= chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_ARGS,
  })
  return launching
}

/**
 * A fresh context that accepts the test server's self-signed certificate.
 * Phone viewport and Thai locale unless overridden.
 */
export async function newContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  return (await browser()).newContext({ ...PHONE, ...options, ignoreHTTPSErrors: true })
}

/** Closes the shared browser if it was launched; safe to call more than once. */
export async function closeBrowser() {
  const pending = launching
  launching = undefined
  if (pending) await (await pending).close()
}

/**
 * With SCREENSHOTS=1, saves the whole page as docs/screenshots/<name>.png
 * (the README's pictures come from the browser tests).
 */
export async function screenshot(page: Page, name: string) {
  if (!process.env.SCREENSHOTS) return
  await page.screenshot({ path: `docs/screenshots/${name}.png`, fullPage: true })
}
