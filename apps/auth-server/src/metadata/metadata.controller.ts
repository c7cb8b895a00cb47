import { Controller, Get, Header, Inject } from '@nestjs/common';
import { SCOPES } from '@svc/contracts';
import { APP_CONFIG, type ConfigOf } from '@svc/platform';
import type { AUTH_SERVER_CONFIG } from '../config';

/** Authorization server metadata (RFC 8414 §2), so clients can configure themselves. */
@Controller('.well-known')
export class MetadataController {
  private readonly metadata: Record<string, unknown>;

  constructor(@Inject(APP_CONFIG) config: ConfigOf<typeof AUTH_SERVER_CONFIG>) {
    const issuer = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
    const authMethods = ['client_secret_post', 'client_secret_basic'];
    this.metadata = {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      userinfo_endpoint: `${issuer}/oauth/userinfo`,
      scopes_supported: [...SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: authMethods,
      revocation_endpoint_auth_methods_supported: authMethods,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: config.DOCS_URL,
    };
  }

  @Get('oauth-authorization-server')
  @Header('cache-control', 'public, max-age=3600')
  get(): Record<string, unknown> {
    return this.metadata;
  }
}
