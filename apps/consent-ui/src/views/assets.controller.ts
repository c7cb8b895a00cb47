import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Controller, Get, Headers, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

// Read once at start-up; the build copies the file next to the compiled controller.
const STYLESHEET = readFileSync(path.join(__dirname, 'consent.css'), 'utf8');
const STYLESHEET_ETAG = `"${createHash('sha256').update(STYLESHEET).digest('base64url').slice(0, 22)}"`;

/** The pages' stylesheet, served by this app (no CDN): the CSP allows `style-src 'self'` only. */
@Controller('account/assets')
export class AssetsController {
  @Get('consent.css')
  stylesheet(@Headers('if-none-match') ifNoneMatch: string | undefined, @Res() reply: FastifyReply) {
    reply
      .header('cache-control', 'public, max-age=3600')
      .header('etag', STYLESHEET_ETAG)
      .header('x-content-type-options', 'nosniff');
    if (ifNoneMatch?.split(',').some((tag) => tag.trim() === STYLESHEET_ETAG)) {
      void reply.status(304).send();
      return;
    }
    void reply.header('content-type', 'text/css; charset=utf-8').send(STYLESHEET);
  }
}
