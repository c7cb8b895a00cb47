import 'reflect-metadata';
import { serveApp } from '@svc/platform';
import { SPONSORSHIP_API } from './app.definition';

void serveApp(SPONSORSHIP_API);
