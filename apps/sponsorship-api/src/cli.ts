import 'reflect-metadata';
import { runAppCli } from '@svc/platform';
import { SPONSORSHIP_API } from './app.definition';

void runAppCli(SPONSORSHIP_API, process.argv.slice(2));
