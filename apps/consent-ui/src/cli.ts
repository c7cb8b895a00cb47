import 'reflect-metadata';
import { runAppCli } from '@svc/platform';
import { CONSENT_UI } from './app.definition';

void runAppCli(CONSENT_UI, process.argv.slice(2));
