// Delivery tables arrive with the webhook feature; the schema itself is created by the CLI.
export const WEBHOOK_DISPATCHER_MIGRATIONS = [];
