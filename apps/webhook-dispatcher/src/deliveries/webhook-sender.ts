import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppEnv } from '@svc/platform';
import { checkTarget } from './target-guard';

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
}

export interface WebhookOutcome {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
}

/** Response bodies are read only this far: enough to log, never enough to exhaust memory. */
export const RESPONSE_BODY_CAP = 4096;

/**
 * One POST. The timeout covers the whole exchange (connect, headers and reading the body), redirects
 * are never followed (a 3xx is a failure), and at most RESPONSE_BODY_CAP bytes of the answer are read.
 */
@Injectable()
export class WebhookSender {
  constructor(@Inject(APP_CONFIG) private readonly config: { readonly APP_ENV: AppEnv }) {}

  async post(request: WebhookRequest): Promise<WebhookOutcome> {
    const verdict = await checkTarget(request.url, this.config.APP_ENV);
    if (!verdict.ok) return { ok: false, statusCode: null, error: `target refused: ${verdict.reason}` };
    const signal = AbortSignal.timeout(request.timeoutMs);
    try {
      const response = await fetch(request.url, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        redirect: 'manual',
        signal,
      });
      await readCapped(response);
      const ok = response.status >= 200 && response.status < 300;
      return { ok, statusCode: response.status, error: ok ? null : `HTTP ${response.status}` };
    } catch (err) {
      return { ok: false, statusCode: null, error: describe(err, signal) };
    }
  }
}

async function readCapped(response: Response): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  let read = 0;
  try {
    while (read < RESPONSE_BODY_CAP) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function describe(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'timeout';
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    return `${err.message}${detail}`.slice(0, 500);
  }
  return String(err).slice(0, 500);
}
