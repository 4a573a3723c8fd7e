#!/usr/bin/env node
// `checkout` as @hosted-checkout/node installs it for merchants: `checkout listen` (the service's own
// commands, serve, migrate and the rest, are bin/checkout.ts of the service, which runs listen the same way).
import { LISTEN_USAGE, runListen } from './listen.ts';

const [command, ...args] = process.argv.slice(2);
let code: number;
if (command === 'listen') {
  code = await runListen(args);
} else if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
  process.stdout.write(`${LISTEN_USAGE}\n`);
  code = 0;
} else {
  process.stderr.write(`checkout: unknown command "${command}"; this package's only command is listen.\n\n${LISTEN_USAGE}\n`);
  code = 2;
}
process.exit(code);
