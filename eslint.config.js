import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'src/gen/', 'sdk/gen/', 'sdk/*/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The hexagon's boundary, inside every module and the kernel: the domain knows no adapter, no generated code,
    // no framework. The patterns match any module's layers (../../order/adapters/…, ../../../kernel/ports/…).
    files: ['src/modules/*/domain/**/*.ts', 'src/kernel/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/adapters/**', '**/application/**', '**/ports/**', '**/gen/**', '**/gateway/**'], message: 'The domain must not import adapters, use cases, ports or generated code.' },
            { group: ['knex', 'pg', 'nats', 'fastify', 'fastify/*', '@connectrpc/*', '@bufbuild/*', '@grpc/*', 'node:*'], message: 'The domain is pure: no I/O libraries, frameworks or Node built-ins.' },
          ],
        },
      ],
    },
  },
  {
    // Use cases speak to the outside only through ports.
    files: ['src/modules/*/application/**/*.ts', 'src/modules/*/ports/**/*.ts', 'src/kernel/application/**/*.ts', 'src/kernel/ports/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/adapters/**', '**/gateway/**'], message: 'Use cases depend on ports, not adapters.' },
            { group: ['knex', 'pg', 'nats', 'fastify', 'fastify/*'], message: 'Use cases depend on ports, not infrastructure libraries.' },
          ],
        },
      ],
    },
  },
  {
    // The gateway holds HTTP only: it reaches the core through its Connect routes and use-case types, never an adapter,
    // and takes its options (gateway/options.ts) from the process composition instead of reading the configuration.
    files: ['gateway/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/src/modules/*/adapters/**', '**/src/kernel/adapters/**', '**/src/composition/**', '**/server/**'], message: 'The gateway holds HTTP only; wiring adapters and reading the configuration are the composition root\'s (src/composition/), and server/ hands the gateway its options.' },
            { group: ['knex', 'pg', 'nats'], message: 'The gateway holds HTTP only: no database or broker clients.' },
          ],
        },
      ],
    },
  },
  {
    // The core knows no HTTP and no process: the gateway and server/ are handed the core, never imported back.
    files: ['src/**/*.ts'],
    ignores: ['src/modules/*/domain/**', 'src/kernel/domain/**', 'src/modules/*/application/**', 'src/modules/*/ports/**', 'src/kernel/application/**', 'src/kernel/ports/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/gateway/**', '**/server/**', '**/bin/**'], message: 'src/ imports no gateway, server/ or bin/: they are handed the core (server/service.ts).' }] }],
    },
  },
  {
    // The SDK is published on its own: it speaks to the service only through the contracts (its own sdk/gen) and the API.
    files: ['sdk/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/src/**', '**/gateway/**', '**/bin/**', '**/test/**'], message: 'The SDK must build without the server\'s code: use sdk/gen and the API.' },
            { group: ['knex', 'pg', 'nats', 'fastify', 'fastify/*'], message: 'The SDK has no server dependencies.' },
          ],
        },
      ],
    },
  },
  {
    // The mobile SDK runs in React Native: no Node built-ins, no Node transport, and no console (it never logs card data).
    files: ['sdk/mobile/**/*.ts'],
    rules: {
      'no-console': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/src/**', '**/gateway/**', '**/bin/**', '**/test/**'], message: 'The SDK must build without the server\'s code: use sdk/gen and the API.' },
            { group: ['node:*', '@connectrpc/connect-node', '@grpc/*', 'knex', 'pg', 'nats', 'fastify', 'fastify/*'], message: 'The mobile SDK uses only fetch and @connectrpc/connect-web.' },
          ],
        },
      ],
    },
  },
  {
    // The embedded fields run in browsers and handle card numbers: no Node built-ins, no library, no console.
    files: ['sdk/fields/**/*.ts'],
    ignores: ['sdk/fields/**/*.spec.ts'],
    rules: {
      'no-console': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            // Only their own modules, as ./name.ts: no Node built-in, no package, nothing of the server's.
            { regex: '^(?!\\./[\\w-]+\\.ts$)', message: 'The fields use only the browser and their own ./name.ts modules (scripts/fields-bundle.ts joins them).' },
          ],
        },
      ],
    },
  },
);
