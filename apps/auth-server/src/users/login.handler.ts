import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_LOGIN, type LoginResponse } from '@svc/contracts';
import { SignInService } from './sign-in.service';

/** consent-ui's sign-in check. The answer never says whether the e-mail exists. */
@Controller()
export class LoginHandler {
  constructor(private readonly signIns: SignInService) {}

  @MessagePattern(AUTH_LOGIN.pattern)
  login(@Payload() payload: unknown): Promise<LoginResponse> {
    return answerRpc(async (): Promise<LoginResponse> => {
      const request = AUTH_LOGIN.parseRequest(payload);
      return this.signIns.signIn(request.email, request.password, request.client_ip);
    });
  }
}
