/**
 * Errors that mean "PostgreSQL could not do the work right now" (unreachable, restarting, pool
 * exhausted past its connect timeout, a statement or lock timeout), as opposed to a bug: callers
 * answer them with 503 `service_unavailable` over HTTP and `temporarily_unavailable` over RPC.
 */
const PG_CONNECTION_CODES = new Set([
  // SQLSTATEs (57014: cancelled by statement_timeout, the database is too slow to answer; 55P03:
  // lock_timeout, a row stayed locked too long, its holder waits on another app: retry), then
  // Node's socket errors.
  ...['57014', '55P03', '57P01', '57P03', '08000', '08001', '08003', '08006'],
  ...['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH'],
]);

/**
 * Duck-typed on purpose: errors raised by Node's own socket code may come from another realm
 * (a test runner's VM context, say) and then fail `instanceof Error`.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message, name } = error as { code?: unknown; message?: unknown; name?: unknown };
  if (typeof code === 'string' && PG_CONNECTION_CODES.has(code)) return true;
  // TypeORM releases a transaction's query runner when its connection dies (the server shut
  // down or restarted mid-transaction); the transaction's next statement then fails with one of
  // these instead of the connection error (found by the fault matrix, test/faults).
  if (name === 'QueryRunnerAlreadyReleasedError' || name === 'QueryRunnerProviderAlreadyReleasedError') {
    return true;
  }
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Query read timeout/i.test(
      message,
    )
  );
}
