import {
  fieldsContract,
  listOf,
  oneOf,
  readFields,
  readRecord,
  readString,
  readStringArray,
  readStringMap,
  type Read,
} from '../../validate';

/** `auth.authorize.validate`/`.decide`: consent-ui shows the screen; auth-server owns every rule and redirect. */
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

const VALIDATE_REQUEST = {
  /** The query parameters, first value of each. */
  params: readStringMap,
  /** Names of parameters that appeared more than once (RFC 6749 §3.1 forbids it). */
  repeated: readStringArray,
};
export type AuthorizeValidateRequest = Read<typeof VALIDATE_REQUEST>;

const DECIDE_REQUEST = { user_id: readString, params: readStringMap, decision: oneOf(['allow', 'deny']) };

function parseOutcome(name: string, input: unknown): AuthorizeOutcome {
  const r = readRecord(name, input);
  const outcome = oneOf(['consent', 'redirect', 'error_page'])(name, r, 'outcome');
  switch (outcome) {
    case 'consent':
      return {
        outcome,
        ...readFields(name, r, {
          client_name: readString,
          scopes: listOf({ scope: readString, description: readString }),
          params: readStringMap,
        }),
      };
    case 'redirect':
      return { outcome, redirect_to: readString(name, r, 'redirect_to', 16384) };
    case 'error_page':
      return { outcome, ...readFields(name, r, { error: readString, error_description: readString }) };
  }
}

export const AUTH_AUTHORIZE_VALIDATE = fieldsContract(
  'auth.authorize.validate',
  ['consent-ui'],
  VALIDATE_REQUEST,
  parseOutcome,
);

export const AUTH_AUTHORIZE_DECIDE = fieldsContract(
  'auth.authorize.decide',
  ['consent-ui'],
  DECIDE_REQUEST,
  parseOutcome,
);
