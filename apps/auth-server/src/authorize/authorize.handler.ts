import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_AUTHORIZE_DECIDE, AUTH_AUTHORIZE_VALIDATE, type AuthorizeOutcome } from '@svc/contracts';
import { AuthorizeService } from './authorize.service';

/** consent-ui's questions about an authorization request; auth-server owns every rule. */
@Controller()
export class AuthorizeHandler {
  constructor(private readonly authorize: AuthorizeService) {}

  @MessagePattern(AUTH_AUTHORIZE_VALIDATE.pattern)
  validate(@Payload() payload: unknown): Promise<AuthorizeOutcome> {
    return answerRpc(() => {
      const request = AUTH_AUTHORIZE_VALIDATE.parseRequest(payload);
      return this.authorize.validate(request.params, request.repeated);
    });
  }

  @MessagePattern(AUTH_AUTHORIZE_DECIDE.pattern)
  decide(@Payload() payload: unknown): Promise<AuthorizeOutcome> {
    return answerRpc(() => {
      const request = AUTH_AUTHORIZE_DECIDE.parseRequest(payload);
      return this.authorize.decide(request.user_id, request.params, request.decision);
    });
  }
}
