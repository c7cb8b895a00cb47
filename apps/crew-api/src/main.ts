import 'reflect-metadata';
import { serveApp } from '@svc/platform';
import { CREW_API } from './app.definition';

void serveApp(CREW_API);
