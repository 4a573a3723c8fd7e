import type { Knex } from 'knex';
import type { Scope } from '../../../merchant/domain/caller.ts';
import { maskIban, type Payout, type PayoutItem, type PayoutItemType, type PayoutOrder, type PayoutStatus } from '../../domain/payout.entity.ts';
import type { PayoutBatcher, PayoutPageQuery, PayoutReader, PayoutRepository, PayoutRun } from '../../ports/payout-repository.port.ts';
import { UnknownCursorError } from '../../../../kernel/ports/errors.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/** Payout runs take this advisory lock for their transaction: one run at a time, whichever process. */
const PAYOUT_RUN_LOCK = 7_201_126;

/**
 * The merchant's money not yet paid out, one row per ledger transaction that moved it (and
 * currency): every transaction with entries on merchant_pending or merchant_available, except
 * settlement's and payouts' own moves between those accounts, posted by the cut-off and in no payout
 * yet, whose money has reached the available balance: posted on it, or its order settled by the
 * cut-off. Amounts from the merchant's side (credit-normal, so negated): gross is everything but the
 * fees, each fee kind apart, net is the whole.
 */
export const UNPAID = `
  SELECT t.id AS transaction_id, t.merchant_id, t.livemode, t.order_id, t.refund_id, t.dispute_id, t.reference, t.created_at, e.currency,
    CASE
      WHEN t.kind = 'capture' THEN 'charge'
      WHEN t.kind = 'refund' THEN 'refund'
      WHEN t.kind = 'payout_failure' THEN 'payout_failure'
      WHEN t.kind LIKE 'dispute%reinstate%' THEN 'dispute_reversal'
      WHEN t.kind LIKE 'dispute%' THEN 'dispute'
      ELSE 'adjustment'
    END AS type,
    -coalesce(sum(e.amount) FILTER (WHERE e.purpose NOT LIKE '%fee'), 0) AS gross,
    coalesce(sum(e.amount) FILTER (WHERE e.purpose = 'percentage_fee'), 0) AS percentage_fee,
    coalesce(sum(e.amount) FILTER (WHERE e.purpose = 'fixed_fee'), 0) AS fixed_fee,
    coalesce(sum(e.amount) FILTER (WHERE e.purpose LIKE '%fee' AND e.purpose NOT IN ('percentage_fee', 'fixed_fee')), 0) AS other_fees,
    -sum(e.amount) AS net
  FROM ledger_transactions t
  JOIN ledger_entries e ON e.transaction_id = t.id AND e.account IN ('merchant_pending', 'merchant_available')
  LEFT JOIN orders o ON o.id = t.order_id
  WHERE t.kind NOT IN ('settle', 'payout', 'payout_paid')
    AND t.created_at <= :cutoff
    AND (CAST(:merchantId AS text) IS NULL OR (t.merchant_id = :merchantId AND t.livemode = :livemode))
    AND NOT EXISTS (SELECT 1 FROM payout_items i WHERE i.transaction_id = t.id)
  GROUP BY t.id, e.currency, o.settled_at
  HAVING bool_or(e.account = 'merchant_available') OR o.settled_at <= :cutoff`;

/** Who is owed a payout: per merchant, mode and currency, the unpaid money when it adds up to more than zero. */
const OWED = `
  SELECT u.merchant_id, u.livemode, u.currency, m.payout_iban
  FROM (${UNPAID}) u JOIN merchants m ON m.id = u.merchant_id
  GROUP BY u.merchant_id, u.livemode, u.currency, m.payout_iban
  HAVING sum(u.net) > 0
  ORDER BY u.merchant_id, u.livemode, u.currency`;

/**
 * Makes the payouts of the groups given (payout id per merchant, mode and currency), in one
 * statement: their items, the payouts with totals summed from exactly those items (a group whose
 * money no longer adds up to more than zero makes none), and each payout's ledger transaction.
 */
const MAKE = `
  WITH g AS (
    SELECT * FROM jsonb_to_recordset(CAST(:groups AS jsonb)) AS g (payout_id text, merchant_id text, livemode boolean, currency text, destination text)
  ), u AS (
    SELECT g.payout_id, u.* FROM (${UNPAID}) u JOIN g ON g.merchant_id = u.merchant_id AND g.livemode = u.livemode AND g.currency = u.currency
  ), totals AS (
    SELECT payout_id, sum(net) AS amount,
      coalesce(sum(gross) FILTER (WHERE type = 'charge'), 0) AS gross,
      sum(percentage_fee + fixed_fee + other_fees) AS fees,
      coalesce(sum(gross) FILTER (WHERE type = 'refund'), 0) AS refunds,
      coalesce(sum(gross) FILTER (WHERE type IN ('dispute', 'dispute_reversal')), 0) AS disputes,
      coalesce(sum(gross) FILTER (WHERE type IN ('payout_failure', 'adjustment')), 0) AS adjustments,
      count(*) AS item_count, count(DISTINCT order_id) AS order_count
    FROM u GROUP BY payout_id HAVING sum(net) > 0
  ), payouts_made AS (
    INSERT INTO payouts (id, merchant_id, livemode, currency, amount, gross, fees, refunds, disputes, adjustments, item_count, order_count,
                         status, destination, arrival_date, cutoff, version, created_at, updated_at)
    SELECT g.payout_id, g.merchant_id, g.livemode, g.currency, totals.amount, totals.gross, totals.fees, totals.refunds, totals.disputes,
           totals.adjustments, totals.item_count, totals.order_count, 'pending', g.destination, CAST(:arrivalDate AS date), :cutoff, 1, :now, :now
    FROM totals JOIN g USING (payout_id)
    RETURNING id, merchant_id, livemode, currency, amount
  ), items_made AS (
    INSERT INTO payout_items (payout_id, line, transaction_id, type, order_id, refund_id, dispute_id, reference, currency, gross, percentage_fee, fixed_fee, other_fees, net, created_at)
    SELECT u.payout_id, row_number() OVER (PARTITION BY u.payout_id ORDER BY u.created_at, u.transaction_id), u.transaction_id, u.type, u.order_id, u.refund_id, u.dispute_id, u.reference, u.currency, u.gross, u.percentage_fee, u.fixed_fee, u.other_fees, u.net, u.created_at
    FROM u JOIN totals USING (payout_id)
    ORDER BY u.payout_id, u.created_at, u.transaction_id
    RETURNING 1
  ), posted AS (
    INSERT INTO ledger_transactions (id, kind, merchant_id, livemode, payout_id, created_at)
    SELECT 'ltx_payout_' || id, 'payout', merchant_id, livemode, id, :now FROM payouts_made
    RETURNING id, payout_id
  ), entries AS (
    INSERT INTO ledger_entries (transaction_id, merchant_id, livemode, account, currency, amount, purpose, created_at)
    SELECT posted.id, p.merchant_id, p.livemode, side.account, p.currency, side.sign * p.amount, 'payout', :now
    FROM posted JOIN payouts_made p ON p.id = posted.payout_id
    CROSS JOIN (VALUES ('merchant_available', 1), ('payouts_in_transit', -1)) AS side (account, sign)
    RETURNING 1
  )
  SELECT id FROM payouts_made ORDER BY id`;

interface PayoutRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  currency: string;
  amount: string;
  gross: string;
  fees: string;
  refunds: string;
  disputes: string;
  adjustments: string;
  item_count: number;
  order_count: number;
  status: string;
  destination: string;
  arrival_date: string | Date;
  cutoff: Date;
  failure_code: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

function isoDay(value: string | Date): string {
  // pg answers a date as a local-midnight Date; its local parts are the day.
  if (typeof value === 'string') return value.slice(0, 10);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
}

function payoutFromRow(row: PayoutRow): Payout {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    currency: row.currency.trim(),
    amount: BigInt(row.amount),
    totals: { gross: BigInt(row.gross), fees: BigInt(row.fees), refunds: BigInt(row.refunds), disputes: BigInt(row.disputes), adjustments: BigInt(row.adjustments) },
    itemCount: row.item_count,
    orderCount: row.order_count,
    status: row.status as PayoutStatus,
    destination: row.destination,
    arrivalDate: isoDay(row.arrival_date),
    cutoff: new Date(row.cutoff),
    failureCode: row.failure_code,
    version: row.version,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

interface ItemRow {
  line: number;
  payout_id: string;
  transaction_id: string;
  type: string;
  order_id: string | null;
  refund_id: string | null;
  dispute_id: string | null;
  reference: string | null;
  currency: string;
  gross: string;
  percentage_fee: string;
  fixed_fee: string;
  other_fees: string;
  net: string;
  created_at: Date;
}

function itemFromRow(row: ItemRow): PayoutItem {
  return {
    id: String(row.line),
    payoutId: row.payout_id,
    transactionId: row.transaction_id,
    type: row.type as PayoutItemType,
    orderId: row.order_id,
    refundId: row.refund_id,
    disputeId: row.dispute_id,
    reference: row.reference,
    currency: row.currency.trim(),
    gross: BigInt(row.gross),
    percentageFee: BigInt(row.percentage_fee),
    fixedFee: BigInt(row.fixed_fee),
    otherFees: BigInt(row.other_fees),
    net: BigInt(row.net),
    createdAt: new Date(row.created_at),
  };
}

/** PayoutBatcher on the ledger and payout tables (migration 012). */
export class PostgresPayoutBatcher implements PayoutBatcher {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  makePayouts(run: PayoutRun): Promise<string[] | undefined> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(?)', [PAYOUT_RUN_LOCK]);
        if (run.day !== undefined) {
          const claimed = await trx('payout_runs').insert({ day: run.day, cutoff: run.cutoff, payouts: 0, ran_at: run.now }).onConflict('day').ignore().returning('day');
          if (claimed.length === 0) return undefined;
        }
        const window = { cutoff: run.cutoff, merchantId: run.scope?.merchantId ?? null, livemode: run.scope?.livemode ?? false };
        const owed = await trx.raw<{ rows: { merchant_id: string; livemode: boolean; currency: string; payout_iban: string | null }[] }>(OWED, window);
        // A live merchant with no bank account on file keeps its balance until the operator adds one.
        const groups = owed.rows
          .filter((row) => !row.livemode || row.payout_iban !== null)
          .map((row) => ({
            payout_id: run.newId(),
            merchant_id: row.merchant_id,
            livemode: row.livemode,
            currency: row.currency.trim(),
            destination: maskIban(row.livemode ? row.payout_iban! : run.sandboxIban),
          }));
        if (groups.length === 0) return [];
        const made = await trx.raw<{ rows: { id: string }[] }>(MAKE, { ...window, groups: JSON.stringify(groups), arrivalDate: run.arrivalDate, now: run.now });
        const ids = made.rows.map((row) => row.id);
        if (run.day !== undefined) await trx('payout_runs').where({ day: run.day }).update({ payouts: ids.length });
        return ids;
      }),
    );
  }
}

/** PayoutReader on the payout tables. */
export class PostgresPayoutReader implements PayoutReader {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  findById(scope: Scope, id: string): Promise<Payout | undefined> {
    return translateErrors(async () => {
      const row = await this.#knex<PayoutRow>('payouts').where({ id, merchant_id: scope.merchantId, livemode: scope.livemode }).first();
      return row ? payoutFromRow(row) : undefined;
    });
  }

  list(scope: Scope, query: PayoutPageQuery & { readonly status: PayoutStatus | undefined }): Promise<{ payouts: Payout[]; hasMore: boolean }> {
    return translateErrors(async () => {
      const q = this.#knex<PayoutRow>('payouts')
        .where({ merchant_id: scope.merchantId, livemode: scope.livemode })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(query.limit + 1);
      if (query.status !== undefined) q.andWhere('status', query.status);
      if (query.startingAfter !== undefined) {
        const cursor = await this.#knex<PayoutRow>('payouts').select('created_at', 'id').where({ id: query.startingAfter, merchant_id: scope.merchantId, livemode: scope.livemode }).first();
        if (!cursor) throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not one of your payouts in this mode.`);
        q.andWhereRaw('(created_at, id) < (?, ?)', [cursor.created_at, cursor.id]);
      }
      const rows = await q;
      return { payouts: rows.slice(0, query.limit).map(payoutFromRow), hasMore: rows.length > query.limit };
    });
  }

  listItems(payoutId: string, query: PayoutPageQuery): Promise<{ items: PayoutItem[]; hasMore: boolean }> {
    return translateErrors(async () => {
      const q = this.#knex<ItemRow>('payout_items').where({ payout_id: payoutId }).orderBy('line').limit(query.limit + 1);
      if (query.startingAfter !== undefined) {
        const line = /^[1-9][0-9]{0,8}$/.test(query.startingAfter) ? Number(query.startingAfter) : undefined;
        const after = line === undefined ? undefined : await this.#knex('payout_items').where({ payout_id: payoutId, line }).first('line');
        if (!after) throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not an item of payout ${payoutId}.`);
        q.andWhere('line', '>', line!);
      }
      const rows = await q;
      return { items: rows.slice(0, query.limit).map(itemFromRow), hasMore: rows.length > query.limit };
    });
  }

  moving(today: string, scope: Scope | undefined, limit: number): Promise<{ toSend: string[]; toArrive: string[] }> {
    return translateErrors(async () => {
      const scoped = (q: Knex.QueryBuilder) => (scope ? q.where({ merchant_id: scope.merchantId, livemode: scope.livemode }) : q);
      const toSend = await scoped(this.#knex('payouts').where({ status: 'pending' }).orderBy('created_at').limit(limit).pluck('id'));
      const toArrive = await scoped(this.#knex('payouts').where({ status: 'in_transit' }).andWhere('arrival_date', '<=', today).orderBy('created_at').limit(limit).pluck('id'));
      return { toSend, toArrive };
    });
  }
}

/** PayoutRepository in one transaction. */
export class PostgresPayoutRepository implements PayoutRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  lock(id: string): Promise<Payout | undefined> {
    return translateErrors(async () => {
      const row = await this.#db<PayoutRow>('payouts').where({ id }).forUpdate().first();
      return row ? payoutFromRow(row) : undefined;
    });
  }

  save(payout: Payout): Promise<void> {
    return translateErrors(async () => {
      await this.#db('payouts').where({ id: payout.id }).update({ status: payout.status, failure_code: payout.failureCode, version: payout.version, updated_at: payout.updatedAt });
    });
  }

  ordersOf(payoutId: string, limit: number): Promise<PayoutOrder[]> {
    return translateErrors(async () => {
      const rows = await this.#db('payout_items')
        .where({ payout_id: payoutId })
        .whereNotNull('order_id')
        .groupBy('order_id', 'reference')
        .orderByRaw('min(line)')
        .limit(limit)
        .select<{ order_id: string; reference: string }[]>('order_id', 'reference');
      return rows.map((row) => ({ id: row.order_id, reference: row.reference }));
    });
  }
}
