// Lint rules of the house: promise safety, exhaustive switches, type-only imports, and the
// dependency rule (apps never import each other; libs only through their public index).
import tseslint from 'typescript-eslint';

const APPS = ['auth-server', 'consent-ui', 'crew-api', 'sponsorship-api', 'webhook-dispatcher', 'gateway'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.run/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['@svc/*/*'], message: 'Import a lib through its public index: @svc/<lib>.' }],
        },
      ],
    },
  },
  // Each app stays inside its own folder: apps talk over RabbitMQ and share only libs/contracts.
  ...APPS.map((app) => ({
    files: [`apps/${app}/src/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@svc/*/*'], message: 'Import a lib through its public index: @svc/<lib>.' },
            {
              group: APPS.filter((other) => other !== app).flatMap((other) => [
                `**/${other}/**`,
                `**/apps/${other}`,
              ]),
              message: 'Apps never import each other; put the shared contract in libs/contracts.',
            },
            { group: ['**/libs/*/src/**'], message: 'Import a lib through @svc/<lib>.' },
          ],
        },
      ],
    },
  })),
  // libs/contracts is types and constants only.
  {
    files: ['libs/contracts/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*', 'typeorm', 'amqplib', 'ioredis', 'pg', '@svc/platform', '@svc/security'],
              message: 'libs/contracts has no runtime dependencies.',
            },
          ],
        },
      ],
    },
  },
);
