export const DAY_MS = 86_400_000;

/**
 * The limits partners build against, in one place: the apps' request parsers, the RPC contracts
 * and the API description all read them from here.
 */
export const API_LIMITS = {
  ratePerMinute: 600,
  ratePerDay: 10_000,
  /** The largest RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_DAY a deployment may configure. */
  ratePerMinuteMax: 1_000_000,
  ratePerDayMax: 1_000_000,
  pageLimitDefault: 50,
  pageLimitMax: 200,
  /** A list cursor as the description allows it; the seat list's own cursors are never longer than `seatCursorMaxLength`. */
  cursorMaxLength: 2048,
  seatCursorMaxLength: 400,
  /** A user id or client id as the services exchange them. */
  idMaxLength: 200,
  reconcileMaxRefs: 50_000,
  refMaxLength: 320,
  emailMaxLength: 320,
  passwordMaxLength: 1024,
  photoUrlMaxLength: 2048,
  codeVerifierMin: 43,
  codeVerifierMax: 128,
  authorizationCodeSeconds: 60,
  accessTokenSeconds: 3600,
  refreshTokenDays: 90,
  webhookBudgetSeconds: 5,
  webhookAttempts: 6,
  webhookRetrySchedule: ['1m', '5m', '30m', '2h', '6h'],
  webhookGiveUpHours: 24,
  webhookReplayWindowMinutes: 5,
  /** `POST /v1/partners/webhooks/replay`: the longest `since`..`until` of one call. */
  webhookRedeliveryReplayMaxDays: 7,
  /** Replay calls per partner per rolling hour (WEBHOOK_REPLAYS_PER_HOUR's default). */
  webhookReplaysPerHour: 10,
  /** Redeliveries per partner per rolling hour (WEBHOOK_REDELIVERIES_PER_HOUR's default). */
  webhookRedeliveriesPerHour: 60,
  /**
   * Endpoint tests per partner per rolling hour, the portal's "Send a test event" and enabling the
   * endpoint (API or portal) together (WEBHOOK_ENDPOINT_CHECKS_PER_HOUR's default).
   */
  webhookEndpointChecksPerHour: 60,
  /** Deliveries one replay call may send again; a wider outage is replayed in several windows. */
  webhookReplayMaxDeliveries: 10_000,
  /** What the delivery log keeps of a receiver's answer, and shows in each attempt. */
  webhookResponseBodyBytes: 1024,
  /** Default of WEBHOOK_DISABLE_AFTER: an endpoint whose attempts have all failed this long is disabled. */
  webhookDisableAfterDays: 5,
  sponsorshipTermMonths: 12,
  sponsorshipMaxTermYears: 10,
  /** Seats of crew members closed within 24 h of provisioning, per rolling 24 h (SPONSORSHIP_PROBE_BUDGET_PER_DAY's default). */
  probeBudgetPerDay: 100,
} as const;
