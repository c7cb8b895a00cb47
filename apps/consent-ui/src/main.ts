import 'reflect-metadata';
import { serveApp } from '@svc/platform';
import { CONSENT_UI } from './app.definition';

void serveApp(CONSENT_UI);
