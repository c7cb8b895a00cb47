/**
 * Jest setupFiles of the integration and e2e tiers. When `npm test` runs a tier on several Jest
 * workers it gives each worker a database, RabbitMQ vhost and Redis key prefix of its own
 * (TEST_WORKER_ENVS, one entry per worker, in JEST_WORKER_ID order), so that two test files
 * running at once never see each other's rows, messages or keys. With one worker, nothing changes.
 */
const envs = JSON.parse(process.env.TEST_WORKER_ENVS || '[]') as Record<string, string>[];
const mine = envs[Number(process.env.JEST_WORKER_ID || 1) - 1];
if (mine) Object.assign(process.env, mine);
