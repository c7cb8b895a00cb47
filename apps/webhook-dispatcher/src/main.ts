import 'reflect-metadata';
import { serveApp } from '@svc/platform';
import { WEBHOOK_DISPATCHER } from './app.definition';

void serveApp(WEBHOOK_DISPATCHER);
