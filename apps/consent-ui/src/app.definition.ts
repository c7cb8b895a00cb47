import { APP_SCHEMAS } from '@svc/contracts';
import type { AppDefinition } from '@svc/platform';
import { CONSENT_UI_CONFIG } from './config';
import { ConsentUiFeaturesModule } from './consent-ui.module';
import { mapConsentUiError } from './errors';
import { CONSENT_UI_MIGRATIONS } from './migrations';
import { SessionStoreModule } from './sessions/sessions.module';
import { renderConsentUiError } from './views/error-page.view';

/** consent-ui: sign-in, the consent screen and the connected-partners page, server-rendered. */
export const CONSENT_UI: AppDefinition<typeof CONSENT_UI_CONFIG> = {
  name: 'consent-ui',
  config: CONSENT_UI_CONFIG,
  database: {
    schema: APP_SCHEMAS['consent-ui'],
    migrations: CONSENT_UI_MIGRATIONS,
  },
  formBodies: true,
  mapDomainError: mapConsentUiError,
  renderError: renderConsentUiError,
  module: class ConsentUiModule {},
  modules: [SessionStoreModule, ConsentUiFeaturesModule],
};
