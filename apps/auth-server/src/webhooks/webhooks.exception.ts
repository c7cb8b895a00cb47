/** What the webhook recipients refuse, without a transport: the RPC mapper decides the answer. */
export class WebhooksException extends Error {
  constructor(
    readonly code: 'dispatcher_only',
    message: string,
  ) {
    super(message);
    this.name = 'WebhooksException';
  }
}
