import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { PortalWebhookAction } from '@svc/contracts';
import { assertUnreachable } from '@svc/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { formField, parseCsrfField } from '../sessions/csrf-field';
import { sendResult, type WebResult } from '../views/web-result';
import { PORTAL_PATH } from './portal-cookies';
import { DELIVERY_QUERY, pick, PortalService, SEAT_QUERY, type PortalSession } from './portal.service';
import {
  actionResult,
  csrfMismatchResult,
  deliveriesResult,
  deliveryResult,
  expiredResult,
  linkResult,
  noSessionResult,
  overviewResult,
  rateLimitedResult,
  seatsResult,
  signedOutResult,
} from './portal.view';

/**
 * The partner portal's pages. Every page but the link itself needs the portal session's cookie,
 * and counts once in its partner's API budget; every form posts its CSRF token; every answer is
 * the page of one view. The link (already counted when the API made it) and signing out (never
 * refused) are not counted.
 */
@Controller('portal')
export class PortalController {
  constructor(private readonly portal: PortalService) {}

  /**
   * The single-use link of `POST /v1/partners/portal/sessions`: a page whose button opens it, so
   * that a GET (a chat preview, a mail scanner) spends nothing.
   */
  @Get('open')
  async offer(@Req() request: FastifyRequest, @Query('token') token: unknown, @Res() reply: FastifyReply) {
    const offer = await this.portal.offer(token, request.headers.cookie);
    sendResult(reply, offer.outcome === 'offer' ? linkResult(offer) : expiredResult());
  }

  /** The link page's button: spends the link and starts the portal session. */
  @Post('open')
  async open(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    const opened = await this.portal.open(
      formField(body, 'token'),
      parseCsrfField(body),
      request.headers.cookie,
    );
    switch (opened.outcome) {
      case 'opened':
        return sendResult(reply, {
          kind: 'redirect',
          status: 303,
          location: PORTAL_PATH,
          cookies: opened.cookies,
          frameAncestors: opened.frameOrigins,
        });
      case 'offer':
        return sendResult(reply, linkResult(opened));
      case 'expired':
        return sendResult(reply, expiredResult());
      default:
        return assertUnreachable(opened);
    }
  }

  @Get()
  async overview(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    await this.page(request, reply, async (s) => overviewResult(s, await this.portal.overview(s)));
  }

  @Get('deliveries')
  async deliveries(@Req() request: FastifyRequest, @Query() query: unknown, @Res() reply: FastifyReply) {
    await this.page(request, reply, async (s) =>
      deliveriesResult(s, pick(query, DELIVERY_QUERY), await this.portal.deliveries(s, query)),
    );
  }

  @Get('deliveries/:deliveryId')
  async delivery(
    @Req() request: FastifyRequest,
    @Param('deliveryId') deliveryId: string,
    @Res() reply: FastifyReply,
  ) {
    await this.page(request, reply, async (s) =>
      deliveryResult(s, await this.portal.delivery(s, deliveryId)),
    );
  }

  @Post('deliveries/:deliveryId/redeliver')
  async redeliver(
    @Req() request: FastifyRequest,
    @Param('deliveryId') deliveryId: string,
    @Body() body: unknown,
    @Res() reply: FastifyReply,
  ) {
    await this.action(request, reply, body, 'redeliver', { deliveryId });
  }

  @Post('replay')
  async replay(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    await this.action(request, reply, body, 'replay', { form: body });
  }

  @Post('endpoint/enable')
  async enable(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    await this.action(request, reply, body, 'enable');
  }

  @Post('endpoint/test')
  async test(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    await this.action(request, reply, body, 'test');
  }

  @Post('signing-keys/rotate')
  async rotateSigningKey(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    await this.action(request, reply, body, 'rotate_signing_key');
  }

  @Get('seats')
  async seats(@Req() request: FastifyRequest, @Query() query: unknown, @Res() reply: FastifyReply) {
    await this.page(request, reply, async (s) =>
      seatsResult(
        s,
        pick(query, SEAT_QUERY),
        s.sponsorship ? await this.portal.seats(s, query) : 'not_in_program',
      ),
    );
  }

  @Post('sign-out')
  async signOut(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    const session = await this.portal.resolve(request.headers.cookie);
    if (!session) return sendResult(reply, noSessionResult());
    if (!this.portal.csrfMatches(session, parseCsrfField(body)))
      return sendResult(reply, csrfMismatchResult(session));
    sendResult(reply, signedOutResult(await this.portal.signOut(request.headers.cookie)));
  }

  private async page(
    request: FastifyRequest,
    reply: FastifyReply,
    render: (session: PortalSession) => Promise<WebResult>,
  ): Promise<void> {
    const session = await this.portal.resolve(request.headers.cookie);
    if (!session) return sendResult(reply, noSessionResult());
    const decision = await this.portal.spend(session);
    sendResult(reply, decision.admitted ? await render(session) : rateLimitedResult(session, decision));
  }

  /** A state-changing form: the session, its CSRF token, then the action (recorded with the session). */
  private async action(
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    action: PortalWebhookAction,
    subject: { readonly deliveryId?: string; readonly form?: unknown } = {},
  ): Promise<void> {
    await this.page(request, reply, async (s) =>
      this.portal.csrfMatches(s, parseCsrfField(body))
        ? actionResult(s, action, await this.portal.act(s, action, subject))
        : csrfMismatchResult(s),
    );
  }
}
