/**
 * The storage ports' contracts (test/contracts/*.contract.ts) against every adapter of them: the
 * Postgres adapters, on a database of the file's own, and the in-memory fakes the use-case tests run
 * on (test/support/fakes). A case that passes on one and fails on the other is a fake that lies.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { merchantRepositoryContract } from './contracts/merchant-repository.contract.ts';
import { orderRepositoryContract } from './contracts/order-repository.contract.ts';
import { paymentRepositoryContract } from './contracts/payment-repository.contract.ts';
import { refundRepositoryContract } from './contracts/refund-repository.contract.ts';
import { eventOutboxContract, ledgerJournalContract, requestLedgerContract, unitOfWorkContract } from './contracts/transaction-ports.contract.ts';
import { openStore, STORES, type StoreUnderTest } from './contracts/stores.ts';

for (const kind of STORES) {
  describe(`storage ports on ${kind}`, () => {
    let store: StoreUnderTest;
    beforeAll(async () => {
      store = await openStore(kind);
    });
    afterAll(async () => {
      await store?.close();
    });
    const current = () => store;
    merchantRepositoryContract(current);
    orderRepositoryContract(current);
    paymentRepositoryContract(current);
    refundRepositoryContract(current);
    requestLedgerContract(current);
    eventOutboxContract(current);
    ledgerJournalContract(current);
    unitOfWorkContract(current);
  });
}
