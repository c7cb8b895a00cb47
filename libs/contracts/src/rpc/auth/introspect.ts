import type { CachedIntrospection } from '../../introspection';
import { readBoolean, readFields, readRecord, readString, readStringArray, sha256Hex } from '../../validate';
import { queueOf, type RpcContract } from '../rpc';

/** `auth.introspect`: is this access token live, and for whom? Only its SHA-256 (lower-case hex) travels. */
export type IntrospectResponse = CachedIntrospection;

const NAME = 'auth.introspect';

export const AUTH_INTROSPECT: RpcContract<{ readonly token_digest: string }, IntrospectResponse> = {
  pattern: NAME,
  queue: queueOf(NAME),
  /** The only app with bearer-token routes besides auth-server (which checks its own store). */
  callers: ['crew-api'],
  parseRequest: (input) => readFields(NAME, input, { token_digest: sha256Hex }),
  parseResponse(input) {
    const r = readRecord(NAME, input);
    if (!readBoolean(NAME, r, 'active')) return { active: false };
    const fields = {
      user_id: readString,
      client_id: readString,
      scopes: readStringArray,
      expires_at: readString,
    };
    return { active: true, ...readFields(NAME, r, fields) };
  },
};
