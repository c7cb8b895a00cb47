import {
  optionalText,
  readBoolean,
  readFields,
  readRecord,
  readString,
  text,
  type Read,
} from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';
import { API_LIMITS } from '../../limits';

/** `auth.login`: consent-ui checks a crew member's e-mail and password with auth-server. */
const REQUEST = {
  /** The browser's address as the gateway saw it: sign-in attempts are throttled per address too. */
  client_ip: optionalText(64),
  email: text(API_LIMITS.emailMaxLength),
  password: text(API_LIMITS.passwordMaxLength),
};
export type LoginRequest = Read<typeof REQUEST>;
export type LoginResponse =
  /** `retry_after_seconds`: too many failed attempts; the password was not checked. */
  | { readonly ok: false; readonly retry_after_seconds?: number }
  | { readonly ok: true; readonly user_id: string; readonly email: string };

const NAME = 'auth.login';

export const AUTH_LOGIN: RpcContract<LoginRequest, LoginResponse> = {
  pattern: NAME,
  queue: RPC_QUEUES.authServer,
  parseRequest: (input) => readFields(NAME, input, REQUEST),
  parseResponse(input) {
    const r = readRecord(NAME, input);
    if (!readBoolean(NAME, r, 'ok')) {
      const wait = r.retry_after_seconds;
      if (wait === undefined || wait === null) return { ok: false };
      if (typeof wait !== 'number' || !Number.isInteger(wait) || wait < 1) {
        throw new ContractViolation(NAME, '`retry_after_seconds` must be a positive integer');
      }
      return { ok: false, retry_after_seconds: wait };
    }
    return { ok: true, user_id: readString(NAME, r, 'user_id'), email: readString(NAME, r, 'email') };
  },
};
