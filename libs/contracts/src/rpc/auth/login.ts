import { readBoolean, readRecord, readString } from '../../validate';
import { RPC_QUEUES, type RpcContract } from '../rpc';

/** `auth.login`: consent-ui checks a crew member's e-mail and password with auth-server. */
export interface LoginRequest {
  readonly email: string;
  readonly password: string;
}
export type LoginResponse =
  { readonly ok: false } | { readonly ok: true; readonly user_id: string; readonly email: string };

const NAME = 'auth.login';

export const AUTH_LOGIN: RpcContract<LoginRequest, LoginResponse> = {
  pattern: NAME,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    const r = readRecord(NAME, input);
    return { email: readString(NAME, r, 'email', 320), password: readString(NAME, r, 'password', 1024) };
  },
  parseResponse(input) {
    const r = readRecord(NAME, input);
    if (!readBoolean(NAME, r, 'ok')) return { ok: false };
    return { ok: true, user_id: readString(NAME, r, 'user_id'), email: readString(NAME, r, 'email') };
  },
};
