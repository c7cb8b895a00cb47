import { Body, Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendResult } from '../views/web-result';
import { parseCsrfField } from '../sessions/csrf-field';
import { parseLoginForm } from './login-form.dto';
import { clientAddress } from '@svc/security';
import { LoginService } from './login.service';
import { loginFormResult, signedOutResult, signInResult, signOutPageResult } from './login.view';

@Controller()
export class LoginController {
  constructor(private readonly login: LoginService) {}

  @Get('login')
  form(@Req() request: FastifyRequest, @Query('return_to') returnTo: unknown, @Res() reply: FastifyReply) {
    const { form, cookies } = this.login.showForm(request.headers.cookie, returnTo);
    sendResult(reply, loginFormResult(form, cookies));
  }

  @Post('login')
  async signIn(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    const outcome = await this.login.signIn(
      request.headers.cookie,
      parseLoginForm(body),
      clientAddress(request),
    );
    sendResult(reply, signInResult(outcome));
  }

  @Get('logout')
  async signOutPage(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    sendResult(reply, signOutPageResult(await this.login.signOutPage(request.headers.cookie)));
  }

  @Post('logout')
  async signOut(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply) {
    const cookies = await this.login.signOut(request.headers.cookie, parseCsrfField(body));
    sendResult(reply, signedOutResult(cookies));
  }
}
