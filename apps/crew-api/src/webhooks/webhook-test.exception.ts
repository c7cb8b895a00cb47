import { DomainException } from '@svc/platform';

/** Why a test webhook cannot be sent, without HTTP: the problem mapper decides the answer. */
export class WebhookNotRegisteredException extends DomainException<'webhook_not_registered'> {
  constructor(clientId: string) {
    super(
      'webhook_not_registered',
      `Partner ${clientId} has no registered webhook URL; ask for one to be registered, then try again.`,
    );
  }
}
