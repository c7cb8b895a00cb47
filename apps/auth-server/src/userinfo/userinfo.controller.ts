import type { UserinfoResponse } from '@svc/contracts';
import { Controller, Get, Header } from '@nestjs/common';
import { BearerAuth, Principal, type Principal as PrincipalType } from '@svc/security';
import { UserinfoService } from './userinfo.service';

@Controller('oauth')
export class UserinfoController {
  constructor(private readonly userinfo: UserinfoService) {}

  /** Any valid access token; `name`, `picture` and `updated_at` only with profile:read. */
  @Get('userinfo')
  @BearerAuth()
  @Header('cache-control', 'no-store')
  get(@Principal() principal: PrincipalType): Promise<UserinfoResponse> {
    return this.userinfo.describe(principal);
  }
}
