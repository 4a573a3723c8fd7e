import type { Knex } from 'knex';
import type { Customer } from '../../domain/customer.entity.ts';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { CustomerPage, CustomerRepository } from '../../ports/customer-repository.port.ts';
import { UnknownCursorError } from '../../../../kernel/ports/errors.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/** The customers table's row. */
interface CustomerRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  email: string | null;
  name: string | null;
  reference: string | null;
  /** Written as JSON text, read back as the object. */
  metadata: Record<string, string> | string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  test_clock_id?: string | null;
}

function toRow(customer: Customer): Omit<CustomerRow, 'deleted_at' | 'metadata'> & { metadata: string } {
  return {
    id: customer.id,
    merchant_id: customer.merchantId,
    livemode: customer.livemode,
    email: customer.email,
    name: customer.name,
    reference: customer.reference,
    metadata: JSON.stringify(customer.metadata),
    test_clock_id: customer.testClockId ?? null,
    created_at: customer.createdAt,
    updated_at: customer.updatedAt,
  };
}

function fromRow(row: CustomerRow): Customer {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    email: row.email,
    name: row.name,
    reference: row.reference,
    metadata: typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, string>) : row.metadata,
    testClockId: row.test_clock_id ?? null,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** CustomerRepository on Postgres; pass a transaction to take part in one. */
export class PostgresCustomerRepository implements CustomerRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  #scoped(scope: Scope, id: string) {
    return this.#db<CustomerRow>('customers').where({ id, merchant_id: scope.merchantId, livemode: scope.livemode }).whereNull('deleted_at');
  }

  async insert(customer: Customer): Promise<void> {
    await translateErrors(() => this.#db('customers').insert(toRow(customer)));
  }

  async findById(scope: Scope, id: string): Promise<Customer | undefined> {
    const row = await translateErrors(() => this.#scoped(scope, id).first());
    return row ? fromRow(row) : undefined;
  }

  async lock(scope: Scope, id: string): Promise<Customer | undefined> {
    const row = await translateErrors(() => this.#scoped(scope, id).forUpdate().first());
    return row ? fromRow(row) : undefined;
  }

  async update(customer: Customer): Promise<void> {
    const { email, name, reference, metadata, updated_at } = toRow(customer);
    await translateErrors(() => this.#scoped(customer, customer.id).update({ email, name, reference, metadata, updated_at }));
  }

  async markDeleted(scope: Scope, id: string, now: Date): Promise<boolean> {
    const updated = await translateErrors(() => this.#scoped(scope, id).update({ email: null, name: null, reference: null, metadata: '{}', deleted_at: now, updated_at: now }));
    return (updated as unknown as number) === 1;
  }

  async list(scope: Scope, query: { limit: number; startingAfter: string | undefined; email: string | undefined }): Promise<CustomerPage> {
    return translateErrors(async () => {
      const q = this.#db<CustomerRow>('customers')
        .where({ merchant_id: scope.merchantId, livemode: scope.livemode })
        .whereNull('deleted_at')
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(query.limit + 1);
      if (query.email !== undefined) q.andWhere('email', query.email);
      if (query.startingAfter !== undefined) {
        const cursor = await this.#scoped(scope, query.startingAfter).select('created_at', 'id').first();
        if (!cursor) throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not one of your customers in this mode.`);
        q.andWhereRaw('(created_at, id) < (?, ?)', [cursor.created_at, cursor.id]);
      }
      const rows = await q;
      return { customers: rows.slice(0, query.limit).map(fromRow), hasMore: rows.length > query.limit };
    });
  }
}
