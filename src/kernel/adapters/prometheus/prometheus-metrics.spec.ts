import { describe, expect, it } from 'vitest';
import { createPrometheusMetrics, MAX_FAILING_ENDPOINT_SERIES } from './prometheus-metrics.ts';

const failureSeries = async (metrics: ReturnType<typeof createPrometheusMetrics>) =>
  (await metrics.render()).split('\n').filter((line) => line.startsWith('checkout_webhook_delivery_failures_total{'));

describe('checkout_webhook_delivery_failures_total', () => {
  it('keeps the series of the most recently failing endpoints only, so created-and-deleted endpoints cannot grow memory', async () => {
    const metrics = createPrometheusMetrics({ role: 'test', processMetrics: false });
    const fail = (endpointId: string, statusCode: number | null) => metrics.webhookAttempt({ endpointId, succeeded: false, statusCode, attemptCount: 0, lagMs: 5 });
    fail('we_first', 500);
    fail('we_first', null);
    for (let i = 0; i < MAX_FAILING_ENDPOINT_SERIES + 100; i++) {
      fail(`we_${i}`, 500);
      if (i === MAX_FAILING_ENDPOINT_SERIES - 100) fail('we_0', 404); // failing again keeps an old endpoint's series
    }
    const lines = await failureSeries(metrics);
    const endpoints = new Set(lines.map((line) => /endpoint_id="([^"]+)"/.exec(line)![1]));
    expect(endpoints.size).toBe(MAX_FAILING_ENDPOINT_SERIES);
    expect(endpoints.has('we_first')).toBe(false);
    expect(endpoints.has(`we_${MAX_FAILING_ENDPOINT_SERIES + 99}`)).toBe(true);
    expect(lines.filter((line) => line.includes('endpoint_id="we_0"')).length).toBe(2);
  });
});
