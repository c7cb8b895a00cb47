import { checkTarget, type AppEnv, type Resolver } from '@svc/platform';

/**
 * Why a webhook URL cannot be registered, by the dispatcher's own rules, so a URL accepted here
 * is not refused at every delivery (which still checks: a name can resolve elsewhere tomorrow), and
 * one on a port the dispatcher's egress policy does not open (WEBHOOK_PORTS) does not fail silently.
 */
export async function webhookUrlProblem(
  url: string,
  appEnv: AppEnv,
  resolve?: Resolver,
): Promise<string | undefined> {
  const verdict = await checkTarget(url, appEnv, resolve);
  if (verdict.ok) return undefined;
  const rule =
    appEnv === 'production'
      ? 'webhooks are delivered over HTTPS on port 443 to public addresses only'
      : 'webhooks are delivered over HTTPS on port 443 to public addresses, or over HTTP(S) to loopback on any port in the sandbox';
  return `webhook URL ${url} is refused: ${verdict.reason} (${rule})`;
}
