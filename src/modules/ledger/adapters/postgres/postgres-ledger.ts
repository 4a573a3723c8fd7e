import type { Knex } from 'knex';
import type { LedgerAccount, LedgerTransaction } from '../../domain/ledger.ts';
import type { AccountBalance, LedgerAudit, LedgerJournal, LedgerViolation } from '../../ports/ledger.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import { UNPAID } from '../../../payout/adapters/postgres/postgres-payouts.ts';

/** LedgerJournal on ledger_transactions and ledger_entries; balances follow by trigger (migration 009). */
export class PostgresLedgerJournal implements LedgerJournal {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  /**
   * The transaction and its entries in one statement (atomic on its own): the entries are inserted only
   * when the transaction's id was free, in the order given, and the answer says whether it was.
   */
  async post(transaction: LedgerTransaction): Promise<boolean> {
    return translateErrors(async () => {
      const claim = this.#db('ledger_transactions')
        .insert({
          id: transaction.id,
          kind: transaction.kind,
          merchant_id: transaction.merchantId,
          livemode: transaction.livemode,
          order_id: transaction.orderId,
          payment_id: transaction.paymentId,
          refund_id: transaction.refundId,
          payout_id: transaction.payoutId ?? null,
          dispute_id: transaction.disputeId ?? null,
          reference: transaction.reference,
          created_at: transaction.createdAt,
        })
        .onConflict('id')
        .ignore()
        .returning('id')
        .toSQL();
      const { entries } = transaction;
      const result = await this.#db.raw<{ rows: { claimed: number }[] }>(
        `WITH t AS (${claim.sql}),
              e AS (INSERT INTO ledger_entries (transaction_id, merchant_id, livemode, account, currency, amount, purpose, order_id, reference, created_at)
                    SELECT t.id, ?::text, ?::boolean, v.account, v.currency, v.amount, v.purpose, ?::text, ?::text, ?::timestamptz
                    FROM t, unnest(?::text[], ?::text[], ?::bigint[], ?::text[]) WITH ORDINALITY AS v(account, currency, amount, purpose, n)
                    ORDER BY v.n
                    RETURNING 1)
         SELECT (SELECT count(*) FROM t)::int AS claimed`,
        [
          ...claim.bindings,
          transaction.merchantId,
          transaction.livemode,
          transaction.orderId,
          transaction.reference,
          transaction.createdAt,
          entries.map((e) => e.account),
          entries.map((e) => e.currency),
          entries.map((e) => e.amount.toString()),
          entries.map((e) => e.purpose),
        ] as Knex.RawBinding[],
      );
      return result.rows[0]!.claimed === 1;
    });
  }

  async find(transactionId: string): Promise<LedgerTransaction | undefined> {
    return translateErrors(async () => {
      const tx = await this.#db('ledger_transactions').where({ id: transactionId }).first();
      if (!tx) return undefined;
      const entries = await this.#db('ledger_entries').where({ transaction_id: transactionId }).orderBy('id');
      return {
        id: tx.id,
        kind: tx.kind,
        merchantId: tx.merchant_id,
        livemode: tx.livemode,
        orderId: tx.order_id,
        paymentId: tx.payment_id,
        refundId: tx.refund_id ?? null,
        payoutId: tx.payout_id ?? null,
        disputeId: tx.dispute_id ?? null,
        reference: tx.reference,
        createdAt: new Date(tx.created_at),
        entries: entries.map((e) => ({ account: e.account, currency: String(e.currency).trim(), amount: BigInt(e.amount), purpose: e.purpose })),
      };
    });
  }
}

/**
 * The invariants, each one set-based query that answers the first row breaking it (docs/money.md
 * lists them). They read committed data; run them while nothing posts, or accept that a
 * transaction committing meanwhile is seen whole or not at all.
 */
const INVARIANTS: ReadonlyArray<{ name: string; sql: string; bindings?: Record<string, unknown> }> = [
  {
    name: 'each transaction balances',
    sql: `SELECT transaction_id || ': ' || currency || ' differs by ' || sum(amount) AS detail
          FROM ledger_entries GROUP BY transaction_id, currency HAVING sum(amount) <> 0 LIMIT 1`,
  },
  {
    name: 'each transaction has at least two entries',
    sql: `SELECT t.id || ' has ' || count(e.id) || ' entries' AS detail
          FROM ledger_transactions t LEFT JOIN ledger_entries e ON e.transaction_id = t.id
          GROUP BY t.id HAVING count(e.id) < 2 LIMIT 1`,
  },
  {
    name: 'every account balance equals the sum of its entries',
    sql: `SELECT coalesce(b.merchant_id, s.merchant_id) || ' ' || coalesce(b.account, s.account) || ' ' || coalesce(b.currency, s.currency)
                 || ': balance ' || coalesce(b.balance, 0) || ', entries ' || coalesce(s.total, 0) AS detail
          FROM ledger_account_balances b
          FULL JOIN (SELECT merchant_id, livemode, account, currency, sum(amount) AS total FROM ledger_entries GROUP BY 1, 2, 3, 4) s
            USING (merchant_id, livemode, account, currency)
          WHERE coalesce(b.balance, 0) <> coalesce(s.total, 0) LIMIT 1`,
  },
  {
    name: 'every captured payment has exactly its capture transaction',
    sql: `SELECT p.id || ' of ' || p.order_id || ' has ' || count(t.id) || ' capture transactions' AS detail
          FROM payments p CROSS JOIN ledger_start s
          LEFT JOIN ledger_transactions t ON t.payment_id = p.id AND t.kind = 'capture'
          WHERE p.status = 'succeeded' AND coalesce(p.captured_at, p.updated_at) >= s.started_at
          GROUP BY p.id HAVING count(t.id) <> 1 LIMIT 1`,
  },
  {
    name: 'every capture transaction clears exactly what its payment captured',
    sql: `SELECT t.id || ': cleared ' || coalesce(sum(e.amount), 0) || ' ' || p.currency || ', captured ' || p.captured_amount AS detail
          FROM ledger_transactions t JOIN payments p ON p.id = t.payment_id
          LEFT JOIN ledger_entries e ON e.transaction_id = t.id AND e.account = 'acquirer_clearing' AND e.currency = p.currency
          WHERE t.kind = 'capture'
          GROUP BY t.id, p.id HAVING coalesce(sum(e.amount), 0) <> coalesce(p.captured_amount, p.amount) LIMIT 1`,
  },
  {
    name: 'every succeeded refund has exactly its refund transaction, and no other refund has one',
    sql: `SELECT r.id || ' (' || r.status || ') has ' || count(t.id) || ' refund transactions' AS detail
          FROM refunds r LEFT JOIN ledger_transactions t ON t.refund_id = r.id AND t.kind = 'refund'
          GROUP BY r.id HAVING count(t.id) <> CASE WHEN r.status = 'succeeded' THEN 1 ELSE 0 END LIMIT 1`,
  },
  {
    name: "an order's refunds never exceed what was captured, and amount_refunded is their sum",
    sql: `SELECT o.id || ': captured ' || coalesce(o.amount_captured, o.amount) || ', amount_refunded ' || o.amount_refunded || ', succeeded refunds ' || coalesce(sum(r.amount), 0) AS detail
          FROM orders o LEFT JOIN refunds r ON r.order_id = o.id AND r.status = 'succeeded'
          GROUP BY o.id HAVING coalesce(sum(r.amount), 0) <> o.amount_refunded OR o.amount_refunded > coalesce(o.amount_captured, o.amount) LIMIT 1`,
  },
  {
    name: 'a void transaction belongs to a voided order, one per order, and a voided order with a capture has one',
    sql: `SELECT o.id || ' (' || o.status || ') has ' || count(*) FILTER (WHERE t.kind = 'void') || ' void and '
                 || count(*) FILTER (WHERE t.kind = 'capture') || ' capture transactions' AS detail
          FROM orders o JOIN ledger_transactions t ON t.order_id = o.id AND t.kind IN ('capture', 'void')
          GROUP BY o.id, o.status
          HAVING count(*) FILTER (WHERE t.kind = 'void') <> CASE WHEN o.status = 'voided' AND count(*) FILTER (WHERE t.kind = 'capture') > 0 THEN 1 ELSE 0 END
          LIMIT 1`,
  },
  {
    name: "a void undoes its order's capture exactly: together they leave nothing on any account",
    sql: `SELECT t.order_id || ': ' || e.account || ' ' || e.currency || ' left at ' || sum(e.amount) AS detail
          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE t.kind IN ('capture', 'void') AND t.order_id IN (SELECT order_id FROM ledger_transactions WHERE kind = 'void')
          GROUP BY t.order_id, e.account, e.currency HAVING sum(e.amount) <> 0 LIMIT 1`,
  },
  {
    name: 'a settled order leaves nothing on the pending balance, and has at most one settle transaction',
    sql: `SELECT o.id || ': ' || coalesce(sum(e.amount) FILTER (WHERE e.account = 'merchant_pending'), 0) || ' left pending after settlement, '
                 || count(DISTINCT t.id) FILTER (WHERE t.kind = 'settle') || ' settle transactions' AS detail
          FROM orders o
          LEFT JOIN ledger_transactions t ON t.order_id = o.id
          LEFT JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE o.settled_at IS NOT NULL
          GROUP BY o.id
          HAVING coalesce(sum(e.amount) FILTER (WHERE e.account = 'merchant_pending'), 0) <> 0 OR count(DISTINCT t.id) FILTER (WHERE t.kind = 'settle') > 1
          LIMIT 1`,
  },
  {
    name: "every refund transaction returns exactly its refund's amount to the card, for the refund's own order",
    sql: `SELECT t.id || ': returned ' || coalesce(-sum(e.amount), 0) || ' ' || r.currency || ' for a refund of ' || r.amount || ' of ' || r.order_id AS detail
          FROM ledger_transactions t JOIN refunds r ON r.id = t.refund_id
          LEFT JOIN ledger_entries e ON e.transaction_id = t.id AND e.account = 'acquirer_clearing' AND e.currency = r.currency
          WHERE t.kind = 'refund'
          GROUP BY t.id, r.id HAVING coalesce(-sum(e.amount), 0) <> r.amount OR max(t.order_id) <> r.order_id OR max(t.merchant_id) <> r.merchant_id LIMIT 1`,
  },
  {
    name: 'an order refunded in full leaves nothing on currency_conversion',
    sql: `SELECT o.id || ': ' || e.currency || ' ' || sum(e.amount) || ' left on currency_conversion' AS detail
          FROM orders o JOIN ledger_entries e ON e.order_id = o.id AND e.account = 'currency_conversion'
          WHERE o.status IN ('refunded', 'voided')
          GROUP BY o.id, e.currency HAVING sum(e.amount) <> 0 LIMIT 1`,
  },
  {
    name: 'every payout equals the sum of its items, and its parts add up to it',
    sql: `SELECT p.id || ': amount ' || p.amount || ', items ' || coalesce(sum(i.net), 0) || ' (' || count(i.id) || ' of ' || p.item_count || ')' AS detail
          FROM payouts p LEFT JOIN payout_items i ON i.payout_id = p.id
          GROUP BY p.id
          HAVING p.amount <> coalesce(sum(i.net), 0) OR count(i.id) <> p.item_count
              OR p.gross <> coalesce(sum(i.gross) FILTER (WHERE i.type = 'charge'), 0)
              OR p.fees <> coalesce(sum(i.percentage_fee + i.fixed_fee + i.other_fees), 0)
              OR p.refunds <> coalesce(sum(i.gross) FILTER (WHERE i.type = 'refund'), 0)
          LIMIT 1`,
  },
  {
    name: "each payout item pays out its own merchant's money once, in the payout's mode and currency, as its transaction moved it",
    sql: `SELECT i.transaction_id || ' in ' || p.id || ': net ' || i.net || ', moved ' || coalesce(-sum(e.amount), 0) AS detail
          FROM payout_items i JOIN payouts p ON p.id = i.payout_id JOIN ledger_transactions t ON t.id = i.transaction_id
          LEFT JOIN ledger_entries e ON e.transaction_id = t.id AND e.account IN ('merchant_pending', 'merchant_available') AND e.currency = p.currency
          GROUP BY i.id, p.id, t.id
          HAVING t.merchant_id <> p.merchant_id OR t.livemode <> p.livemode OR i.currency <> p.currency OR i.net <> coalesce(-sum(e.amount), 0)
              OR t.kind IN ('settle', 'payout', 'payout_paid') OR (t.order_id IS DISTINCT FROM i.order_id)
          LIMIT 1`,
  },
  {
    name: 'each settled order is in exactly one payout once its money is paid out, and each payout item is of a settled order or of the available balance',
    sql: `SELECT i.payout_id || ' pays out ' || i.transaction_id || ' of ' || coalesce(i.order_id, '-') || ', which is not settled' AS detail
          FROM payout_items i LEFT JOIN orders o ON o.id = i.order_id
          WHERE i.type = 'charge' AND (o.settled_at IS NULL OR (SELECT count(*) FROM payout_items c WHERE c.order_id = i.order_id AND c.type = 'charge') <> 1)
          LIMIT 1`,
  },
  {
    name: 'each payout has its payout transaction for its amount, a paid one its arrival, a failed one its return, and nothing else',
    sql: `SELECT p.id || ' (' || p.status || '): ' || string_agg(t.kind || ' ' || coalesce(e.amount::text, '?'), ', ' ORDER BY t.kind) AS detail
          FROM payouts p
          LEFT JOIN ledger_transactions t ON t.payout_id = p.id
          LEFT JOIN ledger_entries e ON e.transaction_id = t.id AND e.account = 'payouts_in_transit'
          GROUP BY p.id
          HAVING count(*) FILTER (WHERE t.kind = 'payout' AND e.amount = -p.amount) <> 1
              OR count(*) FILTER (WHERE t.kind = 'payout_paid' AND e.amount = p.amount) <> CASE WHEN p.status = 'paid' THEN 1 ELSE 0 END
              OR count(*) FILTER (WHERE t.kind = 'payout_failure' AND e.amount = p.amount) <> CASE WHEN p.status = 'failed' THEN 1 ELSE 0 END
              OR count(t.id) <> CASE WHEN p.status IN ('paid', 'failed') THEN 2 ELSE 1 END
          LIMIT 1`,
  },
  {
    name: 'no merchant balance is spent twice: the available balance is exactly what is not yet paid out',
    sql: `WITH unpaid AS (SELECT merchant_id, livemode, currency, sum(net) AS owed FROM (${UNPAID}) u GROUP BY 1, 2, 3),
               available AS (SELECT merchant_id, livemode, currency, -balance AS owed FROM ledger_account_balances WHERE account = 'merchant_available')
          SELECT coalesce(a.merchant_id, u.merchant_id) || ' ' || coalesce(a.currency, u.currency) || ': available ' || coalesce(a.owed, 0) || ', not yet paid out ' || coalesce(u.owed, 0) AS detail
          FROM available a FULL JOIN unpaid u USING (merchant_id, livemode, currency)
          WHERE coalesce(a.owed, 0) <> coalesce(u.owed, 0)
          LIMIT 1`,
    bindings: { cutoff: 'infinity', merchantId: null, livemode: false },
  },
  {
    name: 'every dispute has exactly its withdrawal transaction, a won one its reinstatement, a lost one its loss, and nothing else',
    sql: `SELECT d.id || ' (' || d.status || ') has ' || count(t.id) FILTER (WHERE t.kind = 'dispute_withdrawal') || ' withdrawal, '
                 || count(t.id) FILTER (WHERE t.kind = 'dispute_reinstatement') || ' reinstatement, '
                 || count(t.id) FILTER (WHERE t.kind = 'dispute_loss') || ' loss and '
                 || count(t.id) FILTER (WHERE t.kind NOT IN ('dispute_withdrawal', 'dispute_reinstatement', 'dispute_loss')) || ' other transactions' AS detail
          FROM disputes d LEFT JOIN ledger_transactions t ON t.dispute_id = d.id
          GROUP BY d.id, d.status
          HAVING count(t.id) FILTER (WHERE t.kind = 'dispute_withdrawal') <> 1
              OR count(t.id) FILTER (WHERE t.kind = 'dispute_reinstatement') <> CASE WHEN d.status = 'won' THEN 1 ELSE 0 END
              OR count(t.id) FILTER (WHERE t.kind = 'dispute_loss') <> CASE WHEN d.status = 'lost' THEN 1 ELSE 0 END
              OR count(t.id) FILTER (WHERE t.kind NOT IN ('dispute_withdrawal', 'dispute_reinstatement', 'dispute_loss')) > 0
          UNION ALL
          SELECT t.id || ' names no dispute of its order' AS detail
          FROM ledger_transactions t LEFT JOIN disputes d ON d.id = t.dispute_id AND d.order_id = t.order_id AND d.merchant_id = t.merchant_id
          WHERE t.kind IN ('dispute_withdrawal', 'dispute_reinstatement', 'dispute_loss') AND d.id IS NULL
          LIMIT 1`,
  },
  {
    name: "refunds plus open or lost disputes on an order never exceed what was captured, and amount_disputed is their disputes' sum",
    sql: `SELECT o.id || ': captured ' || coalesce(c.captured, 0) || ', refunded ' || o.amount_refunded || ', disputes open or lost ' || coalesce(d.held, 0)
                 || ', amount_disputed ' || o.amount_disputed AS detail
          FROM orders o
          LEFT JOIN (SELECT order_id, sum(amount) AS held FROM disputes WHERE status <> 'won' GROUP BY order_id) d ON d.order_id = o.id
          LEFT JOIN (SELECT order_id, sum(coalesce(captured_amount, amount)) AS captured FROM payments WHERE status = 'succeeded' GROUP BY order_id) c ON c.order_id = o.id
          WHERE coalesce(d.held, 0) <> o.amount_disputed
             OR (EXISTS (SELECT 1 FROM disputes x WHERE x.order_id = o.id) AND o.amount_refunded + coalesce(d.held, 0) > coalesce(c.captured, 0))
          LIMIT 1`,
  },
  {
    name: 'the dispute reserve of each merchant holds exactly its open disputes',
    sql: `SELECT coalesce(b.merchant_id, s.merchant_id) || ' ' || coalesce(b.currency, s.currency) || ': dispute_reserve ' || coalesce(b.balance, 0)
                 || ', open disputes ' || coalesce(s.held, 0) AS detail
          FROM (SELECT merchant_id, livemode, currency, balance FROM ledger_account_balances WHERE account = 'dispute_reserve') b
          FULL JOIN (SELECT merchant_id, livemode, withdrawn_currency AS currency, -sum(withdrawn_amount) AS held
                     FROM disputes WHERE status IN ('needs_response', 'under_review') GROUP BY 1, 2, 3) s
            USING (merchant_id, livemode, currency)
          WHERE coalesce(b.balance, 0) <> coalesce(s.held, 0) LIMIT 1`,
  },
];

/** LedgerAudit over the ledger tables. */
export class PostgresLedgerAudit implements LedgerAudit {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  async balances(merchantId: string, livemode: boolean): Promise<AccountBalance[]> {
    const rows = await translateErrors(() =>
      this.#knex('ledger_account_balances').where({ merchant_id: merchantId, livemode }).orderBy(['account', 'currency']).select<{ account: string; currency: string; balance: string }[]>('account', 'currency', 'balance'),
    );
    return rows.map((row) => ({ account: row.account as LedgerAccount, currency: row.currency, balance: BigInt(row.balance) }));
  }

  async verify(): Promise<LedgerViolation | undefined> {
    return translateErrors(async () => {
      for (const invariant of INVARIANTS) {
        const result = invariant.bindings
          ? await this.#knex.raw<{ rows: { detail: string }[] }>(invariant.sql, invariant.bindings)
          : await this.#knex.raw<{ rows: { detail: string }[] }>(invariant.sql);
        const broken = result.rows[0];
        if (broken) return { invariant: invariant.name, detail: broken.detail };
      }
      return undefined;
    });
  }
}
