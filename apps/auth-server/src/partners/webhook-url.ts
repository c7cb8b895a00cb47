import { checkTarget, type AppEnv, type Resolver } from '@svc/platform';

/**
 * Why a partner's webhook URL cannot be registered, or undefined when it can. The rules are the
 * dispatcher's, from @svc/platform (HTTPS to a public address; in the sandbox also plain HTTP to
 * loopback), so a URL accepted here is not refused at every delivery later. The dispatcher still
 * checks each delivery: a name can resolve elsewhere tomorrow.
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
      ? 'webhooks are delivered over HTTPS to public addresses only'
      : 'webhooks are delivered over HTTPS to public addresses, or over HTTP(S) to loopback in the sandbox';
  return `webhook URL ${url} is refused: ${verdict.reason} (${rule})`;
}
