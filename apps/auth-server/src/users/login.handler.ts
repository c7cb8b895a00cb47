import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_LOGIN, type LoginResponse } from '@svc/contracts';
import { UsersService } from './users.service';

/** consent-ui's sign-in check. The answer never says whether the e-mail exists. */
@Controller()
export class LoginHandler {
  constructor(private readonly users: UsersService) {}

  @MessagePattern(AUTH_LOGIN.pattern)
  login(@Payload() payload: unknown): Promise<LoginResponse> {
    return answerRpc(async (): Promise<LoginResponse> => {
      const request = AUTH_LOGIN.parseRequest(payload);
      const user = await this.users.verify(request.email, request.password);
      return user ? { ok: true, user_id: user.userId, email: user.email } : { ok: false };
    });
  }
}
