// The boundaries of the code base, checked over the whole import graph by `npm run lint` (alone: `npm run lint:deps`).
// ESLint's no-restricted-imports (eslint.config.js) sees one file's own imports; these rules also see what a
// file reaches through others (`reachable`) and every circle of imports. Type-only imports count: a layer that
// names another's types depends on it as much as one that calls it.

/** A module's layer, or the kernel's: src/modules/<m>/<layer>/ or src/kernel/<layer>/. */
const layer = (name) => `^src/(modules/[^/]+|kernel)/${name}/`;
const DOMAIN = layer('domain');
const APPLICATION = layer('application');
const PORTS = layer('ports');
const ADAPTERS = layer('adapters');
/** The clients of the database and the broker, and the web framework: adapters' and the gateway's, never the core's inner layers. */
const INFRASTRUCTURE = '(^|/)node_modules/(@types/)?(knex|pg|pg-[^/]+|nats|fastify|@fastify/[^/]+)/';
/** The database and broker clients alone. */
const STORE_CLIENTS = '(^|/)node_modules/(@types/)?(knex|pg|nats)/';
/** The kernel's files that name modules today; the list only shrinks. */
const KERNEL_NAMING_MODULES = [
  '^src/kernel/application/connect-errors\\.ts$',
  '^src/kernel/application/idempotent\\.ts$',
  '^src/kernel/ports/idempotency-store\\.port\\.ts$',
  '^src/kernel/adapters/postgres/postgres-idempotency-store\\.ts$',
  '^src/kernel/application/request-context\\.ts$',
  '^src/kernel/ports/metrics\\.port\\.ts$',
];
/** Test files: their own imports (vitest, fixtures) are theirs; the circles rule still sees them. */
const TESTS = '\\.(spec|test)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other in a circle cannot be understood, tested or moved one at a time.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-only-domain',
      severity: 'error',
      comment: 'A domain (a module\'s or the kernel\'s) is pure: it imports other domain folders only, no use case, port, adapter, generated code, package or Node built-in.',
      from: { path: DOMAIN, pathNot: TESTS },
      to: { pathNot: [layer('domain')] },
    },
    {
      name: 'ports-import-only-domain',
      severity: 'error',
      comment: 'A port is the core\'s own words for the outside: it names domain types and other ports, nothing else.',
      from: { path: PORTS, pathNot: TESTS },
      to: { pathNot: [DOMAIN, PORTS] },
    },
    {
      name: 'application-reaches-no-adapter',
      severity: 'error',
      comment: 'Use cases speak to the outside through ports: none reaches an adapter, the gateway or the composition root, even through another file.',
      from: { path: APPLICATION, pathNot: TESTS },
      to: { path: [ADAPTERS, '^gateway/', '^src/composition/'], reachable: true },
    },
    {
      name: 'core-uses-no-infrastructure',
      severity: 'error',
      comment: 'Use cases and ports use no database or broker client and no web framework: those are the adapters\' and the gateway\'s.',
      from: { path: [APPLICATION, PORTS], pathNot: TESTS },
      to: { path: INFRASTRUCTURE },
    },
    {
      name: 'kernel-imports-no-module',
      severity: 'error',
      comment: 'The kernel is what every module shares: it names no module. The files of KERNEL_NAMING_MODULES still do (a type of the merchant, order or payment module each; connect-errors masks card numbers with the payment module\'s rule); the unit of work, the error tables and the wiring context are composed from the modules\' manifests instead (src/composition/modules.ts); no other file may start.',
      from: { path: '^src/kernel/', pathNot: [TESTS, ...KERNEL_NAMING_MODULES] },
      to: { path: '^src/modules/' },
    },
    {
      name: 'src-imports-no-gateway',
      severity: 'error',
      comment: 'The core knows no HTTP and no process: the gateway and the process composition (server/) are handed the core, never imported back.',
      from: { path: '^src/' },
      to: { path: '^(gateway|server|bin)/' },
    },
    {
      name: 'gateway-reaches-no-adapter',
      severity: 'error',
      comment: 'The gateway holds HTTP only: it is handed its routes and options (gateway/options.ts), and reaches no adapter, composition or configuration, even through another file.',
      from: { path: '^gateway/', pathNot: TESTS },
      to: { path: [ADAPTERS, '^src/composition/', '^server/', '^bin/'], reachable: true },
    },
    {
      name: 'gateway-uses-no-store-client',
      severity: 'error',
      comment: 'The gateway holds HTTP only: no database or broker client.',
      from: { path: '^gateway/', pathNot: TESTS },
      to: { path: STORE_CLIENTS },
    },
    {
      name: 'sdk-builds-alone',
      severity: 'error',
      comment: 'The SDK packages are published on their own: they import nothing of the server (src, gateway, bin, test), only sdk/gen and the API.',
      from: { path: '^sdk/' },
      to: { path: '^(src|gateway|server|bin|test|bench|scripts)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo or a missing package.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    exclude: { path: ['^sdk/[^/]+/dist/'] },
    // Generated code is read as a leaf: whatever it imports is protobuf's own.
    doNotFollow: { path: ['(^|/)node_modules/', '^src/gen/', '^sdk/gen/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.cjs', '.d.ts', '.json'],
    },
    cache: false,
  },
};
