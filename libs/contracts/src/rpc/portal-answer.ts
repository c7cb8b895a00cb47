import { readRecord, readString, type MessageRead } from '../validate';
import { ContractViolation, isRecord } from './rpc';

/** An answer to the portal: the body or Problem the partner's API call would get, so the two cannot drift. */
export interface PortalProblem {
  readonly status: number;
  /** The Problem code of the API's answer (`conflict`, `rate_limit_exceeded`, `not_found`, …). */
  readonly code: string;
  readonly detail: string;
  /** 429: seconds until the budget has room again. */
  readonly retry_after?: number;
  /** 422: one entry per field, as the API's `errors`. */
  readonly errors?: readonly { readonly field: string; readonly message: string }[];
}

export type PortalAnswer<T> =
  { readonly ok: true; readonly result: T } | { readonly ok: false; readonly problem: PortalProblem };

/** An API answer's Problem as the portal gets it: a 429's `Retry-After` becomes `retry_after`. */
export function toPortalProblem(
  problem: Omit<PortalProblem, 'retry_after' | 'errors'> & {
    readonly extras: Pick<PortalProblem, 'errors'> & { readonly headers?: Readonly<Record<string, string>> };
  },
): PortalProblem {
  const retryAfter = Number(problem.extras.headers?.['retry-after']);
  return {
    status: problem.status,
    code: problem.code,
    detail: problem.detail,
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retry_after: retryAfter } : {}),
    ...(problem.extras.errors
      ? { errors: problem.extras.errors.map((e) => ({ field: e.field, message: e.message })) }
      : {}),
  };
}

/** Reads a PortalAnswer whose result `readResult` checks. */
export const portalAnswer =
  <T>(readResult: MessageRead<T>): MessageRead<PortalAnswer<T>> =>
  (contract, input) => {
    const r = readRecord(contract, input);
    if (r.ok === true) return { ok: true, result: readResult(contract, r.result) };
    if (r.ok !== false) throw new ContractViolation(contract, '`ok` must be a boolean');
    const p = readRecord(contract, r.problem);
    const status = p.status;
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) {
      throw new ContractViolation(contract, '`problem.status` must be an HTTP error status');
    }
    const errors = Array.isArray(p.errors)
      ? p.errors.filter(isRecord).map((e) => ({ field: String(e.field), message: String(e.message) }))
      : undefined;
    return {
      ok: false,
      problem: {
        status,
        code: readString(contract, p, 'code', 100),
        detail: readString(contract, p, 'detail', 2000),
        ...(typeof p.retry_after === 'number' ? { retry_after: p.retry_after } : {}),
        ...(errors ? { errors } : {}),
      },
    };
  };

/** A JSON object as the owning app's response mapper built it (checked to be an object). */
export function readObject<T>(contract: string, input: unknown): T {
  return readRecord(contract, input) as T;
}
