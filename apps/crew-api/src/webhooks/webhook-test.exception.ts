/** Why a test webhook cannot be sent, without HTTP: the problem mapper decides the answer. */
export class WebhookNotRegisteredException extends Error {
  readonly code = 'webhook_not_registered' as const;

  constructor(clientId: string) {
    super(`Partner ${clientId} has no registered webhook URL; ask for one to be registered, then try again.`);
    this.name = 'WebhookNotRegisteredException';
  }
}
