import { Code } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../ports/errors.ts';
import { toConnectError } from './connect-errors.ts';

describe('toConnectError', () => {
  it('a store that went away: the caller gets unavailable, the operator gets the cause in the log', () => {
    const logged: unknown[] = [];
    const cause = new ServiceUnavailableError('The database is not reachable.', { cause: new Error('terminating connection due to administrator command') });
    const error = toConnectError(cause, (err) => logged.push(err));
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).not.toContain('terminating');
    expect(logged).toEqual([cause]);
  });
});
