import { assertUnreachable } from '@svc/platform';
import type { FastifyReply } from 'fastify';
import { CONNECTIONS_PATH } from '../connections/connections.service';
import { html } from '../views/html';
import { layout } from '../views/layout';
import { applyPageHeaders, page, redirect, sendResult, type WebResult } from '../views/web-result';
import type { ExportOutcome, ExportRefusal } from './export.service';

const REFUSALS: Readonly<Record<ExportRefusal, string>> = {
  cross_site: 'The download was started by another website, so it was stopped to protect your data.',
  bad_token: 'This download link is not from your current session.',
};

function problemPage(status: number, title: string, message: string): WebResult {
  return page(
    status,
    layout(
      title,
      html`<h1>${title}</h1>
        <p>${message}</p>
        <p>
          <a href="${CONNECTIONS_PATH}">Go to your connected partners</a> and use “Download my data” there.
        </p>`,
    ),
  );
}

/** The file, or the page that says why there is none. */
export function sendExport(reply: FastifyReply, result: ExportOutcome): void {
  switch (result.outcome) {
    case 'sign_in':
      return sendResult(reply, redirect(302, result.location));
    case 'refused':
      return sendResult(reply, problemPage(403, 'Download not started', REFUSALS[result.reason]));
    case 'unavailable':
      return sendResult(
        reply,
        problemPage(
          503,
          'Your data cannot be gathered right now',
          'Nothing was downloaded. Try again in a moment.',
        ),
      );
    case 'download':
      // The page headers too: no-store (personal data), nosniff, no framing, no referrer.
      applyPageHeaders(reply);
      reply.header('content-type', 'application/json; charset=utf-8');
      reply.header('content-disposition', `attachment; filename="${result.filename}"`);
      reply.status(200);
      void reply.send(JSON.stringify(result.body, null, 2));
      return;
    default:
      return assertUnreachable(result);
  }
}
