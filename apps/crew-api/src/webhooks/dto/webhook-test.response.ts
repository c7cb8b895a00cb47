/** Webhook test result (docs/rules.md, Resources). */
export interface WebhookTestResponse {
  readonly event_id: string;
  readonly delivery_id: string;
  /** The registered URL the delivery was enqueued against. */
  readonly target_url: string;
}
