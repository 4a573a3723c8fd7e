import type { Knex } from 'knex';
import type { Settlement, SettlementRun } from '../../ports/settlement.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/**
 * A transfer has no capture of its own: it is captured when it arrives (the payment's updated_at).
 * Each batch is two statements in one transaction. The first takes due orders (row locks, SKIP
 * LOCKED) and marks them settled. The second, with a snapshot taken after those locks were granted,
 * posts for each order a transaction ltx_settle_<order id> moving its net on merchant_pending (its
 * capture less its fees and the refunds and disputes taken from it, per currency) to
 * merchant_available. One statement would not do: its snapshot predates the locks, so a refund that
 * held an order's lock and committed meanwhile would be settled without its entries. An order whose
 * net is zero (refunded in full before settlement) is marked settled with no transaction.
 */
export const MARK_DUE_SQL = `
  WITH due AS (
    SELECT o.id
    FROM orders o
    JOIN merchants m ON m.id = o.merchant_id
    JOIN payments p ON p.order_id = o.id AND p.status = 'succeeded'
    WHERE o.settled_at IS NULL AND o.status IN ('paid', 'partially_refunded', 'refunded')
      AND (:ignoreDelay OR coalesce(p.captured_at, p.updated_at) <= CAST(:now AS timestamptz) - make_interval(days => m.settlement_delay_days))
      AND (CAST(:merchantId AS text) IS NULL OR (o.merchant_id = :merchantId AND o.livemode = :livemode))
    LIMIT :limit
    FOR UPDATE OF o SKIP LOCKED
  )
  UPDATE orders SET settled_at = :now FROM due WHERE orders.id = due.id RETURNING orders.id`;

/** Posts the settle transactions of the orders just marked (their ids as a JSON array). */
export const POST_SETTLED_SQL = `
  WITH due AS (
    SELECT o.id, o.merchant_id, o.livemode, o.reference, p.id AS payment_id
    FROM jsonb_array_elements_text(CAST(:ids AS jsonb)) AS marked (id)
    JOIN orders o ON o.id = marked.id
    JOIN payments p ON p.order_id = o.id AND p.status = 'succeeded'
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
  )
  INSERT INTO ledger_entries (transaction_id, merchant_id, livemode, account, currency, amount, purpose, order_id, reference, created_at)
  SELECT posted.id, posted.merchant_id, posted.livemode, side.account, net.currency, side.sign * -net.total, 'settlement', posted.order_id, posted.reference, :now
  FROM posted JOIN net ON net.order_id = posted.order_id
  CROSS JOIN (VALUES ('merchant_pending', 1), ('merchant_available', -1)) AS side (account, sign)`;

/** Settlement on the orders, payments and ledger tables. */
export class PostgresSettlement implements Settlement {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  async settleDue(run: SettlementRun): Promise<number> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        const marked = await trx.raw<{ rows: { id: string }[] }>(MARK_DUE_SQL, {
          now: run.now,
          ignoreDelay: run.ignoreDelay,
          merchantId: run.scope?.merchantId ?? null,
          livemode: run.scope?.livemode ?? false,
          limit: run.limit,
        });
        if (marked.rows.length > 0) await trx.raw(POST_SETTLED_SQL, { ids: JSON.stringify(marked.rows.map((row) => row.id)), now: run.now });
        return marked.rows.length;
      }),
    );
  }
}
