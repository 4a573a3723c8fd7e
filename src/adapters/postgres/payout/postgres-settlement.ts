import type { Knex } from 'knex';
import type { Settlement, SettlementRun } from '../../../ports/payout/settlement.port.ts';
import { translateErrors } from '../database.ts';

/**
 * A transfer has no capture of its own: it is captured when it arrives (the payment's updated_at).
 * One statement per batch: take due orders (row locks, SKIP LOCKED), mark them settled, and post for
 * each a transaction ltx_settle_<order id> that moves the order's net on merchant_pending (its
 * capture less its fees and the refunds taken from it, per currency) to merchant_available. An order
 * whose net is zero (refunded in full before settlement) is marked settled with no transaction.
 */
export const SETTLE_SQL = `
  WITH due AS (
    SELECT o.id, o.merchant_id, o.livemode, o.reference, p.id AS payment_id
    FROM orders o
    JOIN merchants m ON m.id = o.merchant_id
    JOIN payments p ON p.order_id = o.id AND p.status = 'succeeded'
    WHERE o.settled_at IS NULL AND o.status IN ('paid', 'partially_refunded', 'refunded')
      AND (:ignoreDelay OR coalesce(p.captured_at, p.updated_at) <= CAST(:now AS timestamptz) - make_interval(days => m.settlement_delay_days))
      AND (CAST(:merchantId AS text) IS NULL OR (o.merchant_id = :merchantId AND o.livemode = :livemode))
    LIMIT :limit
    FOR UPDATE OF o SKIP LOCKED
  ), marked AS (
    UPDATE orders SET settled_at = :now FROM due WHERE orders.id = due.id RETURNING orders.id
  ), net AS (
    SELECT t.order_id, e.currency, sum(e.amount) AS total
    FROM due
    JOIN ledger_transactions t ON t.order_id = due.id
    JOIN ledger_entries e ON e.transaction_id = t.id AND e.account = 'merchant_pending'
    GROUP BY t.order_id, e.currency HAVING sum(e.amount) <> 0
  ), posted AS (
    INSERT INTO ledger_transactions (id, kind, merchant_id, livemode, order_id, payment_id, reference, created_at)
    SELECT 'ltx_settle_' || due.id, 'settle', due.merchant_id, due.livemode, due.id, due.payment_id, due.reference, :now
    FROM due WHERE EXISTS (SELECT 1 FROM net WHERE net.order_id = due.id)
    ON CONFLICT (id) DO NOTHING
    RETURNING id, order_id, merchant_id, livemode, reference
  ), entries AS (
    INSERT INTO ledger_entries (transaction_id, merchant_id, livemode, account, currency, amount, purpose, order_id, reference, created_at)
    SELECT posted.id, posted.merchant_id, posted.livemode, side.account, net.currency, side.sign * -net.total, 'settlement', posted.order_id, posted.reference, :now
    FROM posted JOIN net ON net.order_id = posted.order_id
    CROSS JOIN (VALUES ('merchant_pending', 1), ('merchant_available', -1)) AS side (account, sign)
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM marked) AS settled, (SELECT count(*) FROM entries) AS entries`;

/** Settlement on the orders, payments and ledger tables. */
export class PostgresSettlement implements Settlement {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  async settleDue(run: SettlementRun): Promise<number> {
    const result = await translateErrors(() =>
      this.#knex.transaction((trx) =>
        trx.raw<{ rows: { settled: string }[] }>(SETTLE_SQL, {
          now: run.now,
          ignoreDelay: run.ignoreDelay,
          merchantId: run.scope?.merchantId ?? null,
          livemode: run.scope?.livemode ?? false,
          limit: run.limit,
        }),
      ),
    );
    return Number(result.rows[0]?.settled ?? 0);
  }
}
