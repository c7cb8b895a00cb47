import 'reflect-metadata';
import { serveApp } from '@svc/platform';
import { AUTH_SERVER } from './app.definition';

void serveApp(AUTH_SERVER);
