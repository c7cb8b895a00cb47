import { randomBytes } from 'node:crypto';
import { REQUEST_ID_PATTERN } from '@svc/contracts';

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('base64url')}`;
}

/** decisions.md: keep a well-formed incoming id (the gateway's, usually), replace anything else. */
export function pickRequestId(incoming: string | string[] | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value !== undefined && REQUEST_ID_PATTERN.test(value) ? value : newRequestId();
}
