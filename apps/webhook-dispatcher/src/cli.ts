import 'reflect-metadata';
import { runAppCli } from '@svc/platform';
import { WEBHOOK_DISPATCHER } from './app.definition';

// A command is over when its promise settles; a broker connection still being torn down must not
// keep an operator's terminal waiting.
void runAppCli(WEBHOOK_DISPATCHER, process.argv.slice(2)).finally(() => {
  setTimeout(() => process.exit(), 1000).unref();
});
