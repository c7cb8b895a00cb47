import { APP_SCHEMAS } from '@svc/contracts';
import type { AppDefinition } from '@svc/platform';
import { CONSENT_UI_CONFIG } from './config';
import { ConsentUiFeaturesModule } from './consent-ui.module';
import { mapConsentUiError } from './errors';
import { CONSENT_UI_MIGRATIONS } from './migrations';
import { PortalModule } from './portal/portal.module';
import { SessionStoreModule } from './sessions/sessions.module';
import { renderConsentUiError } from './views/error-page.view';

/** consent-ui: sign-in, the consent screen, the connected-partners page and the partner portal, server-rendered. */
export const CONSENT_UI: AppDefinition<typeof CONSENT_UI_CONFIG> = {
  name: 'consent-ui',
  config: CONSENT_UI_CONFIG,
  database: {
    schema: APP_SCHEMAS['consent-ui'],
    migrations: CONSENT_UI_MIGRATIONS,
  },
  // The rate limiter's windows (the partner portal counts in the partners' API budgets).
  redis: true,
  formBodies: true,
  mapDomainError: mapConsentUiError,
  renderError: renderConsentUiError,
  module: class ConsentUiModule {},
  // The partner portal keeps its own sessions in PostgreSQL, so it is not among the features the
  // in-memory unit app serves.
  modules: [SessionStoreModule, ConsentUiFeaturesModule, PortalModule],
};
