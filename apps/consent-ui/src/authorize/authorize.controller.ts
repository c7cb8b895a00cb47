import { Body, Controller, Get, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendResult } from '../views/web-result';
import { parseDecisionForm } from './authorize-request';
import { AuthorizeService } from './authorize.service';
import { authorizePageResult, decisionResult } from './authorize.view';

@Controller('oauth/authorize')
export class AuthorizeController {
  constructor(private readonly authorize: AuthorizeService) {}

  @Get()
  async show(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const view = await this.authorize.show(request.headers.cookie, request.url);
    sendResult(reply, authorizePageResult(view, request.id));
  }

  @Post()
  async decide(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    const result = await this.authorize.decide(request.headers.cookie, parseDecisionForm(body));
    sendResult(reply, decisionResult(result, request.id));
  }
}
