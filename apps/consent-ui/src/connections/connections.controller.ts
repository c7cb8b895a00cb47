import { Body, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseCsrfField } from '../sessions/csrf-field';
import { sendResult } from '../views/web-result';
import { ConnectionsService } from './connections.service';
import { connectionsPageResult, disconnectedResult } from './connections.view';

@Controller('account/connections')
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

  @Get()
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    sendResult(reply, connectionsPageResult(await this.connections.list(request.headers.cookie)));
  }

  @Post(':clientId/disconnect')
  async disconnect(
    @Req() request: FastifyRequest,
    @Param('clientId') clientId: string,
    @Body() body: unknown,
    @Res() reply: FastifyReply,
  ) {
    const cookies = await this.connections.disconnect(request.headers.cookie, clientId, parseCsrfField(body));
    sendResult(reply, disconnectedResult(cookies));
  }
}
