import 'reflect-metadata';
import { runAppCli } from '@svc/platform';
import { WEBHOOK_DISPATCHER } from './app.definition';

void runAppCli(WEBHOOK_DISPATCHER, process.argv.slice(2));
