import { Controller, Get, Header, Inject } from '@nestjs/common';
import { authorizationServerMetadata } from '@svc/contracts';
import { APP_CONFIG, type ConfigOf } from '@svc/platform';
import type { AUTH_SERVER_CONFIG } from '../config';

/** Authorization server metadata (RFC 8414 §2), so clients can configure themselves. */
@Controller('.well-known')
export class MetadataController {
  private readonly metadata: Record<string, unknown>;

  constructor(@Inject(APP_CONFIG) config: ConfigOf<typeof AUTH_SERVER_CONFIG>) {
    this.metadata = authorizationServerMetadata(config.PUBLIC_BASE_URL.replace(/\/+$/, ''), config.DOCS_URL);
  }

  @Get('oauth-authorization-server')
  @Header('cache-control', 'public, max-age=3600')
  get(): Record<string, unknown> {
    return this.metadata;
  }
}
