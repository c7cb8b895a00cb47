import { APP_SCHEMAS } from '@svc/contracts';
import {
  DatabaseModule,
  MessagingModule,
  PlatformModule,
  RpcModule,
  type AppDefinition,
} from '@svc/platform';
import { CONSENT_UI_CONFIG } from './config';
import { ConsentUiFeaturesModule } from './consent-ui.module';
import { mapConsentUiError } from './errors';
import { CONSENT_UI_MIGRATIONS } from './migrations';
import { SessionStoreModule } from './sessions/sessions.module';
import { renderConsentUiError } from './views/error-page.view';

const database = {
  schema: APP_SCHEMAS['consent-ui'],
  migrations: CONSENT_UI_MIGRATIONS,
};

/** consent-ui: sign-in, the consent screen and the connected-partners page, server-rendered. */
export const CONSENT_UI: AppDefinition<typeof CONSENT_UI_CONFIG> = {
  name: 'consent-ui',
  config: CONSENT_UI_CONFIG,
  database,
  formBodies: true,
  mapDomainError: mapConsentUiError,
  renderError: renderConsentUiError,
  rootModule: (platform) => ({
    module: class ConsentUiModule {},
    imports: [
      PlatformModule.forRoot(platform),
      DatabaseModule.forRoot(database),
      MessagingModule.forRoot(),
      RpcModule,
      SessionStoreModule,
      ConsentUiFeaturesModule,
    ],
  }),
};
