import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ExportService } from './export.service';
import { sendExport } from './export.view';

@Controller('account/export')
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  /** "Download my data": a JSON attachment for the signed-in member, from this origin only. */
  @Get()
  async download(@Req() request: FastifyRequest, @Query('token') token: unknown, @Res() reply: FastifyReply) {
    const fetchSite = request.headers['sec-fetch-site'];
    sendExport(
      reply,
      await this.exports.download({
        cookieHeader: request.headers.cookie,
        token,
        fetchSite: typeof fetchSite === 'string' ? fetchSite : undefined,
      }),
    );
  }
}
