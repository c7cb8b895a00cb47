import { fieldsContract, optionalText, readBoolean, readRecord, readString, text } from '../../validate';
import { ContractViolation } from '../rpc';
import { API_LIMITS } from '../../limits';

/** `auth.login`: consent-ui checks a crew member's e-mail and password with auth-server. */
const REQUEST = {
  /** The browser's address as the gateway saw it: sign-in attempts are throttled per address too. */
  client_ip: optionalText(64),
  email: text(API_LIMITS.emailMaxLength),
  password: text(API_LIMITS.passwordMaxLength),
};
export type LoginResponse =
  /** `retry_after_seconds`: too many failed attempts; the password was not checked. */
  | { readonly ok: false; readonly retry_after_seconds?: number }
  | { readonly ok: true; readonly user_id: string; readonly email: string };

export const AUTH_LOGIN = fieldsContract(
  'auth.login',
  ['consent-ui'],
  REQUEST,
  (contract, input): LoginResponse => {
    const r = readRecord(contract, input);
    if (!readBoolean(contract, r, 'ok')) {
      const wait = r.retry_after_seconds;
      if (wait === undefined || wait === null) return { ok: false };
      if (typeof wait !== 'number' || !Number.isInteger(wait) || wait < 1) {
        throw new ContractViolation(contract, '`retry_after_seconds` must be a positive integer');
      }
      return { ok: false, retry_after_seconds: wait };
    }
    return { ok: true, user_id: readString(contract, r, 'user_id'), email: readString(contract, r, 'email') };
  },
);
