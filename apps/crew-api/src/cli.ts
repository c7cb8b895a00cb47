import 'reflect-metadata';
import { runAppCli } from '@svc/platform';
import { CREW_API } from './app.definition';

void runAppCli(CREW_API, process.argv.slice(2));
