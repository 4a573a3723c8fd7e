import { unbalancedReason, type LedgerTransaction } from '../../../src/modules/ledger/domain/ledger.ts';
import type { LedgerJournal } from '../../../src/modules/ledger/ports/ledger.port.ts';
import type { MemoryTables, TablesRef } from './memory-tables.ts';

/** LedgerJournal in memory: append-only, refusing what does not balance (the table's trigger does so by the commit). */
export class MemoryLedgerJournal implements LedgerJournal {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async post(transaction: LedgerTransaction): Promise<boolean> {
    const tables = this.#tables();
    if (tables.ledger.has(transaction.id)) return false;
    const reason = unbalancedReason(transaction.entries);
    if (reason) throw new Error(`ledger transaction ${transaction.id} does not balance: ${reason}`);
    // Stored as the tables keep it: the optional causes present, null when unset.
    tables.ledger.set(transaction.id, { ...transaction, refundId: transaction.refundId ?? null, payoutId: transaction.payoutId ?? null, disputeId: transaction.disputeId ?? null, entries: transaction.entries.map((e) => ({ ...e })) });
    return true;
  }

  async find(transactionId: string): Promise<LedgerTransaction | undefined> {
    return this.#tables().ledger.get(transactionId);
  }
}

/** Every posted ledger transaction, in the order posted. */
export function postedTransactions(tables: MemoryTables): LedgerTransaction[] {
  return [...tables.ledger.values()];
}
