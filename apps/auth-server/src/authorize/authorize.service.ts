import { Inject, Injectable } from '@nestjs/common';
import { isScope, SCOPE_DESCRIPTIONS, type AuthorizeOutcome, type Scope } from '@svc/contracts';
import { APP_CONFIG, newSecret, sha256Hex, TransactionRunner, type ConfigOf } from '@svc/platform';
import type { AUTH_SERVER_CONFIG } from '../config';
import { ConsentsRepository } from '../consents/consents.repository';
import { PartnersService } from '../partners/partners.service';
import { isAcceptableRedirectUri } from '../partners/redirect-uri';
import { AuthorizationCodesRepository } from './authorization-codes.repository';

/** The parameters of an authorization request this server reads (docs/rules.md, OAuth endpoints). */
const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
] as const;

interface ValidRequest {
  readonly clientId: string;
  readonly clientName: string;
  readonly redirectUri: string;
  readonly scopes: Scope[];
  readonly state: string;
  readonly codeChallenge: string;
}

type Validation = { ok: true; request: ValidRequest } | { ok: false; outcome: AuthorizeOutcome };

// RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is always 43 characters of the base64url alphabet.
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_STATE_LENGTH = 1024;

@Injectable()
export class AuthorizeService {
  private readonly issuer: string;

  constructor(
    private readonly partners: PartnersService,
    private readonly consents: ConsentsRepository,
    private readonly codes: AuthorizationCodesRepository,
    private readonly transactions: TransactionRunner,
    @Inject(APP_CONFIG) private readonly config: ConfigOf<typeof AUTH_SERVER_CONFIG>,
  ) {
    this.issuer = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  }

  async validate(
    params: Readonly<Record<string, string>>,
    repeated: readonly string[],
  ): Promise<AuthorizeOutcome> {
    const validation = await this.check(params, repeated);
    if (!validation.ok) return validation.outcome;
    const { request } = validation;
    return {
      outcome: 'consent',
      client_name: request.clientName,
      scopes: request.scopes.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] })),
      params: Object.fromEntries(AUTHORIZE_PARAMS.map((name) => [name, params[name]])),
    };
  }

  /** Everything is validated again: the posted form is only as trustworthy as the browser. */
  async decide(
    userId: string,
    params: Readonly<Record<string, string>>,
    decision: 'allow' | 'deny',
  ): Promise<AuthorizeOutcome> {
    const validation = await this.check(params, []);
    if (!validation.ok) return validation.outcome;
    const { request } = validation;
    if (decision === 'deny') {
      return this.redirect(request.redirectUri, {
        error: 'access_denied',
        error_description: 'The crew member declined the request.',
        state: request.state,
      });
    }
    const code = newSecret('ac_');
    await this.transactions.run(async (tx) => {
      await this.consents.grant(tx, userId, request.clientId, request.scopes);
      await this.codes.insert(tx, {
        codeDigest: sha256Hex(code),
        clientId: request.clientId,
        userId,
        redirectUri: request.redirectUri,
        scopes: request.scopes,
        codeChallenge: request.codeChallenge,
        expiresAt: new Date(Date.now() + this.config.AUTH_CODE_TTL_SECONDS * 1000),
      });
    });
    return this.redirect(request.redirectUri, { code, state: request.state });
  }

  /**
   * RFC 6749 §4.1.2.1: while the client or its redirect URI is in doubt, never redirect (an
   * error page instead); after that, every error goes back to the client with the state.
   */
  private async check(
    params: Readonly<Record<string, string>>,
    repeated: readonly string[],
  ): Promise<Validation> {
    const page = (error: string, description: string): Validation => ({
      ok: false,
      outcome: { outcome: 'error_page', error, error_description: description },
    });
    if (repeated.includes('client_id') || repeated.includes('redirect_uri')) {
      return page('invalid_request', 'client_id and redirect_uri must appear once.');
    }
    const clientId = params.client_id;
    if (!clientId) return page('invalid_request', 'client_id is missing.');
    const partner = await this.partners.findById(clientId);
    if (!partner) return page('invalid_client', 'This application is not registered with the service.');
    const redirectUri = params.redirect_uri;
    if (!redirectUri) return page('invalid_request', 'redirect_uri is missing.');
    // Exact string comparison: no normalisation, a trailing slash makes another URI (RFC 9700 §2.1).
    if (!partner.redirectUris.includes(redirectUri) || !isAcceptableRedirectUri(redirectUri)) {
      return page('invalid_request', 'redirect_uri is not registered for this application.');
    }

    const state = params.state;
    // A state too long to send back cannot be returned unchanged (RFC 6749 §4.1.2), so it is not
    // returned at all: the member sees an error page.
    if (state !== undefined && state.length > MAX_STATE_LENGTH) {
      return page('invalid_request', `state is longer than ${MAX_STATE_LENGTH} characters.`);
    }
    // Descriptions never quote the request: RFC 6749 §4.1.2.1 limits their characters, and an
    // echo would let anyone write into the partner's callback URL.
    const fail = (error: string, description: string): Validation => ({
      ok: false,
      outcome: this.redirect(redirectUri, { error, error_description: description, state }),
    });
    if (repeated.length > 0) return fail('invalid_request', 'Request parameters must not repeat.');
    if (!params.response_type) return fail('invalid_request', 'response_type is missing.');
    if (params.response_type !== 'code')
      return fail('unsupported_response_type', 'Only response_type=code is supported.');
    if (!state) return fail('invalid_request', 'state is missing.');
    if (!params.code_challenge)
      return fail('invalid_request', 'code_challenge is missing (PKCE is required).');
    if (params.code_challenge_method !== 'S256') {
      return fail('invalid_request', 'code_challenge_method must be S256; plain is not accepted.');
    }
    if (!S256_CHALLENGE.test(params.code_challenge)) {
      return fail(
        'invalid_request',
        'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).',
      );
    }
    if (!params.scope) return fail('invalid_request', 'scope is missing.');
    const requested = [...new Set(params.scope.split(' ').filter((s) => s !== ''))];
    const unknown = requested.filter((s) => !isScope(s) || !partner.allowedScopes.includes(s));
    if (requested.length === 0 || unknown.length > 0) {
      return fail('invalid_scope', 'The requested scope is not allowed for this application.');
    }
    if (partner.suspended) return fail('access_denied', 'This application is suspended.');
    return {
      ok: true,
      request: {
        clientId,
        clientName: partner.name,
        redirectUri,
        scopes: requested as Scope[],
        state,
        codeChallenge: params.code_challenge,
      },
    };
  }

  /** Appends the response parameters, plus `iss` (RFC 9207), keeping the URI's own query. */
  private redirect(redirectUri: string, values: Record<string, string | undefined>): AuthorizeOutcome {
    const target = new URL(redirectUri);
    for (const [name, value] of Object.entries({ ...values, iss: this.issuer })) {
      if (value !== undefined) target.searchParams.append(name, value);
    }
    return { outcome: 'redirect', redirect_to: target.toString() };
  }
}
