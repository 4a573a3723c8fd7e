import { describe, expect, it } from 'vitest';
import { redactNatsUrl } from './events.ts';

describe('redactNatsUrl', () => {
  it('hides the credentials of every server of a NATS_URL, and leaves the rest as it was', () => {
    expect(redactNatsUrl('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
    expect(redactNatsUrl('nats://checkout:s3cret@n1:4222,tls://t0ken@n2:4222,n3:4222')).toBe('nats://***@n1:4222,tls://***@n2:4222,n3:4222');
  });
});
