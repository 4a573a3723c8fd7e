import type { Customer } from '../domain/customer.entity.ts';
import type { Scope } from '../../merchant/domain/caller.ts';

/** One page of customers, newest first. */
export interface CustomerPage {
  readonly customers: Customer[];
  readonly hasMore: boolean;
}

/** Stores customers; a deleted customer is found by no read. */
export interface CustomerRepository {
  insert(customer: Customer): Promise<void>;
  /** A customer of the scope, unless deleted. */
  findById(scope: Scope, id: string): Promise<Customer | undefined>;
  /** The same, the row locked until the transaction ends (a deletion and a vaulting serialise on it). */
  lock(scope: Scope, id: string): Promise<Customer | undefined>;
  /** Saves the customer's fields. */
  update(customer: Customer): Promise<void>;
  /** Marks it deleted and erases its fields (its id stays, as orders name it). */
  markDeleted(scope: Scope, id: string, now: Date): Promise<boolean>;
  /**
   * A page of the scope's customers, newest first.
   * @throws UnknownCursorError when startingAfter names none of the scope's customers
   */
  list(scope: Scope, query: { readonly limit: number; readonly startingAfter: string | undefined; readonly email: string | undefined }): Promise<CustomerPage>;
}
