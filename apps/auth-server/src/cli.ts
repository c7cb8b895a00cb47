import 'reflect-metadata';
import { runAppCli } from '@svc/platform';
import { AUTH_SERVER } from './app.definition';

void runAppCli(AUTH_SERVER, process.argv.slice(2));
