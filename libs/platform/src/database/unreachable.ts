/**
 * Errors that mean "PostgreSQL could not do the work right now" (unreachable, restarting, pool
 * exhausted past its connect timeout, a statement or lock timeout), as opposed to a bug: callers
 * answer them with 503 `service_unavailable` over HTTP and `temporarily_unavailable` over RPC.
 */
const PG_CONNECTION_CODES = new Set([
  // 57014: cancelled by statement_timeout, the database is too slow to answer.
  '57014',
  // 55P03: lock_timeout, a row stayed locked too long (its holder waits on another app): retry.
  '55P03',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  '57P01',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/**
 * Duck-typed on purpose: errors raised by Node's own socket code may come from another realm
 * (a test runner's VM context, say) and then fail `instanceof Error`.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && PG_CONNECTION_CODES.has(code)) return true;
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Query read timeout/i.test(
      message,
    )
  );
}
