import { readOneOf, readRecord, readString, readStringArray, readStringMap } from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';

/**
 * `auth.authorize.validate` and `auth.authorize.decide`: consent-ui shows the consent screen and
 * records the crew member's decision; auth-server owns every rule (docs/rules.md, OAuth endpoints)
 * and builds every redirect. consent-ui passes the query parameters through untouched.
 */
export type AuthorizeOutcome =
  /** Show the consent screen. */
  | {
      readonly outcome: 'consent';
      readonly client_name: string;
      readonly scopes: readonly { readonly scope: string; readonly description: string }[];
      /** The validated parameters to post back with the decision. */
      readonly params: Readonly<Record<string, string>>;
    }
  /** Send the browser to the partner (a code, or an error such as access_denied). */
  | { readonly outcome: 'redirect'; readonly redirect_to: string }
  /** Unknown client or redirect URI: never redirect; show a 400 page. */
  | { readonly outcome: 'error_page'; readonly error: string; readonly error_description: string };

export interface AuthorizeValidateRequest {
  /** The query parameters, first value of each. */
  readonly params: Readonly<Record<string, string>>;
  /** Names of parameters that appeared more than once (RFC 6749 §3.1 forbids it). */
  readonly repeated: readonly string[];
}

export interface AuthorizeDecideRequest {
  readonly user_id: string;
  readonly params: Readonly<Record<string, string>>;
  readonly decision: 'allow' | 'deny';
}

function parseOutcome(name: string, input: unknown): AuthorizeOutcome {
  const r = readRecord(name, input);
  const outcome = readOneOf(name, r, 'outcome', ['consent', 'redirect', 'error_page'] as const);
  switch (outcome) {
    case 'consent': {
      const scopes = r.scopes;
      if (!Array.isArray(scopes)) throw new ContractViolation(name, '`scopes` must be an array');
      return {
        outcome,
        client_name: readString(name, r, 'client_name'),
        scopes: scopes.map((s) => {
          const item = readRecord(name, s);
          return {
            scope: readString(name, item, 'scope'),
            description: readString(name, item, 'description'),
          };
        }),
        params: readStringMap(name, r, 'params'),
      };
    }
    case 'redirect':
      return { outcome, redirect_to: readString(name, r, 'redirect_to', 16384) };
    case 'error_page':
      return {
        outcome,
        error: readString(name, r, 'error'),
        error_description: readString(name, r, 'error_description'),
      };
  }
}

const VALIDATE = 'auth.authorize.validate';
export const AUTH_AUTHORIZE_VALIDATE: RpcContract<AuthorizeValidateRequest, AuthorizeOutcome> = {
  pattern: VALIDATE,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    const r = readRecord(VALIDATE, input);
    return {
      params: readStringMap(VALIDATE, r, 'params'),
      repeated: readStringArray(VALIDATE, r, 'repeated'),
    };
  },
  parseResponse: (input) => parseOutcome(VALIDATE, input),
};

const DECIDE = 'auth.authorize.decide';
export const AUTH_AUTHORIZE_DECIDE: RpcContract<AuthorizeDecideRequest, AuthorizeOutcome> = {
  pattern: DECIDE,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    const r = readRecord(DECIDE, input);
    return {
      user_id: readString(DECIDE, r, 'user_id'),
      params: readStringMap(DECIDE, r, 'params'),
      decision: readOneOf(DECIDE, r, 'decision', ['allow', 'deny'] as const),
    };
  },
  parseResponse: (input) => parseOutcome(DECIDE, input),
};
