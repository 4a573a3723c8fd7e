import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/composition/config.ts';
import { DEFAULT_CONNECTION_LIMITS } from '../gateway/options.ts';
import { gatewayOptionsOf } from '../server/service.ts';

// The gateway reads no configuration: the process composition hands it its options, read from the environment.
describe('the gateway\'s options, from the configuration', () => {
  it('without the variables set, the configuration\'s connection limits are the gateway\'s own defaults', () => {
    expect(loadConfig({}).connectionLimits).toEqual(DEFAULT_CONNECTION_LIMITS);
  });

  it('carries the port, host, public address, log level, trusted proxies and connection limits over', () => {
    const config = loadConfig({
      PORT: '8123',
      HOST: '127.0.0.2',
      PUBLIC_URL: 'https://api.example.test',
      LOG_LEVEL: 'warn',
      TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
      HTTP_HEADERS_TIMEOUT_MS: '2000',
      HTTP_REQUEST_TIMEOUT_MS: '4000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '3000',
      MAX_CONNECTIONS: '77',
    });
    expect(gatewayOptionsOf(config)).toEqual({
      port: 8123,
      host: '127.0.0.2',
      publicUrl: 'https://api.example.test',
      logLevel: 'warn',
      trustProxy: ['10.0.0.0/8', '127.0.0.1'],
      connectionLimits: { headersTimeoutMs: 2000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 3000, maxConnections: 77 },
    });
  });
});
