import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { AUTH_PING, type AuthPingResponse } from '@svc/contracts';

/** Answers `auth.ping`, so other apps can prove their RPC path to auth-server works. */
@Controller()
export class PingHandler {
  @MessagePattern(AUTH_PING.pattern)
  ping(@Payload() payload: unknown): AuthPingResponse {
    const request = AUTH_PING.parseRequest(payload);
    return { app: 'auth-server', from: request.from, at: new Date().toISOString() };
  }
}
