import { describe, expect, it } from 'vitest';
import { eventsMode, loadConfig } from './config.ts';

describe('NATS_URL and the events\' mode', () => {
  it('absent or empty: no NATS, events through the event stream in Postgres', () => {
    for (const env of [{}, { NATS_URL: '' }, { NATS_URL: '   ' }]) {
      const config = loadConfig(env);
      expect(config.natsUrl).toBeUndefined();
      expect(eventsMode(config)).toBe('postgres-outbox');
    }
  });

  it('set: events through NATS JetStream, at one server or a cluster\'s', () => {
    expect(eventsMode(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222' }))).toBe('nats');
    const cluster = loadConfig({ NATS_URL: ' nats://n1:4222, nats://n2:4222 ,nats://n3:4222' });
    expect(cluster.natsUrl).toBe('nats://n1:4222,nats://n2:4222,nats://n3:4222');
    expect(eventsMode(cluster)).toBe('nats');
  });
});
