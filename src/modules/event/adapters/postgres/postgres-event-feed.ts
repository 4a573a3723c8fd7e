import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/domain-event.ts';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { EventFeed } from '../../ports/event-subscription.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import { rowToEvent, type EventRow } from './postgres-event-outbox.ts';
import type { PostgresEventNotifications } from './postgres-event-notifications.ts';

/** Options of {@link PostgresEventFeed}. */
export interface PostgresEventFeedOptions {
  /** Wake-ups when the relay appends to the stream; without them a tail only polls. */
  readonly notifications?: PostgresEventNotifications;
  /** Longest sleep between two looks at the stream when no notification comes. */
  readonly pollMs?: number;
  /** Stream positions read per look. */
  readonly batchSize?: number;
  /** Told when a look fails (Postgres unreachable): the tail stays open and looks again. */
  readonly onError?: (err: unknown) => void;
}

/**
 * A live tail over the event stream in Postgres (no NATS), one merchant and
 * one mode, from now on: it starts after the stream's last position when
 * tail() resolves, and reads every later position in order (the relay makes
 * positions visible in their order; see appendToEventStream), showing the
 * scope's events. Each tail reads the whole stream and filters, as the NATS
 * feed does with its subscription: tails are few (`checkout listen`).
 */
export class PostgresEventFeed implements EventFeed {
  readonly #knex: Knex;
  readonly #notifications: PostgresEventNotifications | undefined;
  readonly #pollMs: number;
  readonly #batchSize: number;
  readonly #onError: (err: unknown) => void;

  constructor(knex: Knex, options: PostgresEventFeedOptions = {}) {
    this.#knex = knex;
    this.#notifications = options.notifications;
    this.#pollMs = options.pollMs ?? 250;
    this.#batchSize = options.batchSize ?? 500;
    this.#onError = options.onError ?? (() => undefined);
  }

  /** @throws ServiceUnavailableError when Postgres cannot be reached to find where the stream ends. */
  async tail(scope: Scope, onEvent: (event: DomainEvent) => void): Promise<{ close(): void }> {
    const knex = this.#knex;
    const last = await translateErrors(() => knex.raw('SELECT coalesce(max(stream_seq), 0)::text AS position FROM events'));
    let position = String(last.rows[0].position);
    let open = true;
    let wake: (() => void) | undefined;
    let pendingWake = false;
    const nudge = () => {
      pendingWake = true;
      wake?.();
    };
    const sleep = async (ms: number) => {
      if (pendingWake || !open) {
        pendingWake = false;
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
      pendingWake = false;
    };
    const unsubscribe = this.#notifications?.subscribe(nudge);
    void (async () => {
      let failures = 0;
      while (open) {
        let rows: (EventRow & { stream_seq: string })[];
        try {
          const result = await translateErrors(() =>
            knex.raw('SELECT * FROM events WHERE stream_seq > ?::bigint ORDER BY stream_seq LIMIT ?', [position, this.#batchSize]),
          );
          rows = result.rows;
          failures = 0;
        } catch (err) {
          failures += 1;
          this.#onError(err);
          await sleep(Math.min(5000, 100 * 2 ** Math.min(failures, 6)));
          continue;
        }
        for (const row of rows) {
          position = row.stream_seq;
          if (!open) break;
          if (row.merchant_id === scope.merchantId && row.livemode === scope.livemode) onEvent(rowToEvent(row));
        }
        if (rows.length < this.#batchSize) await sleep(this.#pollMs);
      }
    })();
    return {
      close: () => {
        open = false;
        unsubscribe?.();
        nudge();
      },
    };
  }
}
