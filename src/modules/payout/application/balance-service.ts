import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { GetBalanceResponseSchema, type BalanceService } from '../../../gen/checkout/v1/balance_pb.ts';
import type { LedgerAudit } from '../../ledger/ports/ledger.port.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';

/** Implements checkout.v1.BalanceService: the caller's pending and available balances, from the ledger. */
export function createBalanceService(deps: { readonly authenticate: Authenticate; readonly ledger: LedgerAudit }): ServiceImpl<typeof BalanceService> {
  return {
    getBalance: async (_req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const balances = await deps.ledger.balances(caller.merchantId, caller.livemode);
      // The merchant's accounts are credit-normal: what we owe shows as a negative sum of entries.
      const owed = (account: string) => balances.filter((b) => b.account === account).map((b) => ({ currency: b.currency, amount: -b.balance }));
      return create(GetBalanceResponseSchema, { pending: owed('merchant_pending'), available: owed('merchant_available'), livemode: caller.livemode });
    },
  };
}
