import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (`npm test` installs the `chromium` package and
 * passes CHROMIUM_BIN), with a fresh profile per context and nothing phoning home.
 */
export const CHROMIUM_ARGS = [
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
