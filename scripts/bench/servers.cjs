'use strict';
// Servers measured by `npm run bench`, each started as its own process:
//   node servers.cjs bare <port>       a bare Fastify JSON route (the baseline)
//   node servers.cjs nest <port>       the same route in a plain Nest app on Fastify (no platform)
//   node servers.cjs platform <port>   the same route in a Nest app built by the platform's createHttpApp
//                                      (request ids, JSON request logs, Problem filter), as every app runs
require('reflect-metadata');
const path = require('node:path');

const BODY = {
  user_id: 'usr_bench',
  name: 'Alex Morgan',
  role: 'Chief Officer',
  country: 'NO',
  photo_url: null,
};
const [kind, port] = process.argv.slice(2);

async function bare() {
  const fastify = require('fastify')({ logger: false });
  fastify.get('/v1/me', async () => BODY);
  await fastify.listen({ port: Number(port), host: '127.0.0.1' });
}

/** The route in a Nest app on Fastify as Nest's documentation builds one: what Nest itself costs. */
async function nest() {
  const { NestFactory } = require('@nestjs/core');
  const { FastifyAdapter } = require('@nestjs/platform-fastify');
  const app = await NestFactory.create(benchModule(), new FastifyAdapter(), { logger: false });
  await app.listen({ port: Number(port), host: '127.0.0.1' });
}

function benchModule() {
  const { Controller, Get, Module } = require('@nestjs/common');
  class MeController {
    me() {
      return BODY;
    }
  }
  Controller('v1')(MeController);
  const descriptor = Object.getOwnPropertyDescriptor(MeController.prototype, 'me');
  Get('me')(MeController.prototype, 'me', descriptor);
  class BenchModule {}
  Module({ controllers: [MeController] })(BenchModule);
  return BenchModule;
}

async function platform() {
  const dist = path.resolve(__dirname, '../../dist/libs/platform/src');
  const { createHttpApp, createLogger, loadConfig, BASE_CONFIG, PlatformModule, RouteIndex } = require(dist);
  const BenchModule = benchModule();
  // Its metrics listener on a free port: it runs beside apps that hold the default one.
  const config = loadConfig(BASE_CONFIG, { PORT: port, APP_ENV: 'sandbox', METRICS_PORT: '0' });
  // Logs are written, as in production, but to /dev/null so the terminal is not the bottleneck.
  const logger = createLogger('bench', 'info', require('pino').destination('/dev/null'));
  const routes = new RouteIndex();
  const options = { app: 'bench', logger, routes, config };
  const app = await createHttpApp(
    {
      module: class BenchRoot {},
      imports: [PlatformModule.forRoot({ app: 'bench', config, logger, routes }), BenchModule],
    },
    options,
  );
  await app.listen({ port: Number(port), host: '127.0.0.1' });
}

({ bare, nest, platform })
  [kind]()
  .then(() => process.send && process.send('ready'))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
