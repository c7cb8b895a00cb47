import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (`npm test` installs the `chromium` package and
 * passes CHROMIUM_BIN), with a fresh profile per context and nothing phoning home.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** `ignoreHTTPSErrors`: pages on this machine served with a certificate of their own (self-signed). */
export async function launchBrowser(options: { ignoreHTTPSErrors?: boolean } = {}): Promise<Browser> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM_BIN ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
    ignoreHTTPSErrors: options.ignoreHTTPSErrors ?? false,
  });
  context.setDefaultTimeout(20_000);
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * What the browser tests check on every page a person sees (crew members, partners' staff):
 * axe-core's WCAG 2.0/2.1 A and AA rules, and no sideways scrolling on a 320 px wide phone.
 */
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: readonly string[];
}

/** axe-core's violations on the page as it stands; an empty array means the page passes. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, not added as a <script>: the pages' Content-Security-Policy
  // (`default-src 'none'`) rightly blocks inline scripts, and the check must not weaken it.
  await page.evaluate(AXE_SOURCE);
  // Strings, not functions: this code runs in the page, and the project's types are Node's, not the DOM's.
  return page.evaluate(`(async () => {
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_21_AA)} } });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      targets: v.nodes.flatMap((n) => n.target.map(String)),
    }));
  })()`);
}

const PHONE_WIDTH = 320;

/**
 * How many CSS pixels the page is wider than a 320 px viewport (0 when nothing scrolls sideways).
 * Sets the viewport first, so call it on a page already loaded.
 */
export async function sidewaysOverflow(page: Page): Promise<number> {
  await page.setViewportSize({ width: PHONE_WIDTH, height: 640 });
  return page.evaluate<number>(`(() => {
    const root = document.documentElement;
    return Math.max(root.scrollWidth, document.body.scrollWidth) - root.clientWidth;
  })()`);
}

/**
 * The elements the Tab key reaches, in order, each as "tag: accessible text". Lets a test show a
 * page can be used from the keyboard alone (every control reachable, in reading order).
 */
export async function tabOrder(page: Page, max = 40): Promise<string[]> {
  await page.evaluate(`document.activeElement?.blur(); window.__firstTabStop = undefined`);
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    // Back at the first element (not merely one with the same label: a page may have several
    // "Disconnect" buttons) means the order went round.
    const label = await page.evaluate<string | null>(`(() => {
      const el = document.activeElement;
      if (!el || el === document.body || el === window.__firstTabStop) return null;
      if (!window.__firstTabStop) window.__firstTabStop = el;
      const text = (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().replace(/\\s+/g, ' ');
      return el.tagName.toLowerCase() + ': ' + (text || el.name || '');
    })()`);
    if (label === null) break;
    seen.push(label);
  }
  return seen;
}
