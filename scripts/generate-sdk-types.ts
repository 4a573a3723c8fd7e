// Writes sdk/node/api-types.ts, the server SDK's API types, from the /v1 OpenAPI document (see sdk-types.ts).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openApiDocument, renderSdkTypes, SDK_TYPES_FILE } from './sdk-types.ts';

writeFileSync(SDK_TYPES_FILE, renderSdkTypes(await openApiDocument()));
console.log(`${path.relative(process.cwd(), SDK_TYPES_FILE)} written from the /v1 OpenAPI document`);
