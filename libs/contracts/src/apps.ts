/** The service's processes. The gateway is nginx; the others are NestJS apps on Fastify. */
export const NEST_APPS = [
  'auth-server',
  'consent-ui',
  'crew-api',
  'sponsorship-api',
  'webhook-dispatcher',
] as const;
export type NestAppName = (typeof NEST_APPS)[number];

/** Local default ports (docs/operations.md, "Ports"). Every app reads `PORT`; these are the fall-backs. */
export const DEFAULT_PORTS: Readonly<Record<NestAppName | 'gateway', number>> = {
  gateway: 8080,
  'auth-server': 3001,
  'crew-api': 3002,
  'sponsorship-api': 3003,
  'consent-ui': 3004,
  'webhook-dispatcher': 3005,
};

/** Local METRICS_PORT defaults, one per app for `npm start` (Kubernetes uses 9464 for every app). */
export const DEFAULT_METRICS_PORTS: Readonly<Record<NestAppName, number>> = {
  'auth-server': 9301,
  'crew-api': 9302,
  'sponsorship-api': 9303,
  'consent-ui': 9304,
  'webhook-dispatcher': 9305,
};

/** PostgreSQL schema each app owns; no app reads another's schema. */
export const APP_SCHEMAS: Readonly<Record<NestAppName, string>> = {
  'auth-server': 'auth',
  'consent-ui': 'consent',
  'crew-api': 'crew',
  'sponsorship-api': 'sponsorship',
  'webhook-dispatcher': 'webhooks',
};
