import { ConfigError, loadConfig, type ConfigOf, type ConfigSpec } from './config';

/**
 * The one place that reads `process.env`. On a bad configuration it prints every problem on
 * stderr and exits with status 78 (EX_CONFIG), before any connection is opened.
 */
export function loadConfigOrExit<S extends ConfigSpec>(app: string, spec: S): ConfigOf<S> {
  try {
    return loadConfig(spec, process.env);
  } catch (err) {
    if (err instanceof ConfigError) exitOnConfigError(app, err);
    throw err;
  }
}

/**
 * Prints every problem on stderr and exits 78 (EX_CONFIG). Also for what only a dependency can
 * tell (a state Redis that evicts), so an operator sees one kind of refusal naming the variable.
 */
export function exitOnConfigError(app: string, err: ConfigError): never {
  for (const p of err.problems) {
    process.stderr.write(
      `${JSON.stringify({ level: 'fatal', app, msg: `configuration: ${p.variable} ${p.reason}`, variable: p.variable })}\n`,
    );
  }
  process.stderr.write(`${app} refuses to start: ${err.message}\n`);
  process.exit(78);
}
