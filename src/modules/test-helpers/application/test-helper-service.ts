import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { TestHelperService } from '../../../gen/checkout/v1/test_helpers_pb.ts';
import type { PayoutRuns } from '../../payout/application/run-payouts.ts';
import { payoutToProto } from '../../payout/application/payout-service.ts';
import {
  CreateDisputeRequestSchema,
  CreateDisputeResponseSchema,
  RunPayoutsRequestSchema,
  RunPayoutsResponseSchema,
  SimulateBankTransferRequestSchema,
  SimulateBankTransferResponseSchema,
} from '../../../gen/checkout/v1/test_helpers_pb.ts';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { OpenDisputeIn } from '../../dispute/application/open-dispute.ts';
import { disputeToProto } from '../../dispute/application/dispute-mapper.ts';
import { evidenceOf } from '../../dispute/application/order-evidence.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import type { ReceiveTransfer } from '../../payment/application/receive-transfer.ts';
import { createGetOrder } from '../../order/application/get-order.ts';
import { orderToProto } from '../../order/application/order-mapper.ts';

/** Implements checkout.v1.TestHelperService: test-mode simulations, refused with live keys. */
export function createTestHelperService(deps: {
  readonly authenticate: Authenticate;
  readonly receiveTransfer: ReceiveTransfer;
  readonly idempotent: Idempotent;
  readonly payouts: PayoutRuns;
  readonly openDispute: OpenDisputeIn;
}): ServiceImpl<typeof TestHelperService> {
  return {
    runPayouts: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      if (caller.livemode) {
        throw new ApplicationError('test_helpers.live_mode', 'Payout runs can only be started in test mode; use a sk_test_ key. Live money settles on its schedule.');
      }
      const outcome = req.outcome ?? 'paid';
      if (outcome !== 'paid' && outcome !== 'failed') {
        throw new ApplicationError('test_helpers.outcome_invalid', 'outcome must be "paid" or "failed".', 'outcome');
      }
      const call = { operation: 'test_helpers.run_payouts', input: RunPayoutsRequestSchema, request: req, output: RunPayoutsResponseSchema };
      // With a key, a repeat answers the first run's payouts; without, each call pays out what has come in since.
      return deps.idempotent(ctx, caller, call, async () => {
        const run = await deps.payouts.runNow({ merchantId: caller.merchantId, livemode: false }, outcome);
        return create(RunPayoutsResponseSchema, { settledOrders: run.settledOrders, payouts: run.payouts.map(payoutToProto) });
      });
    },
    createDispute: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      if (caller.livemode) {
        throw new ApplicationError('test_helpers.live_mode', 'Disputes can only be simulated in test mode; use a sk_test_ key. Live disputes come from the card networks.');
      }
      const call = { operation: 'test_helpers.create_dispute', input: CreateDisputeRequestSchema, request: req, output: CreateDisputeResponseSchema };
      return deps.idempotent(ctx, caller, call, async (tx) => {
        // Looked up in the caller's scope first: another merchant's or mode's order is unknown here.
        const found = await tx.orders.findById(caller, req.orderId);
        if (!found) throw new ApplicationError('order.not_found', `No such order: "${req.orderId}".`, 'id');
        const dispute = await deps.openDispute(tx, found.id, { reason: req.reason, amount: req.amount, evidenceDueBy: req.evidenceDueBy ? timestampDate(req.evidenceDueBy) : undefined }, 'test_helper');
        return create(CreateDisputeResponseSchema, { dispute: disputeToProto(dispute, await evidenceOf(tx, found)) });
      });
    },
    simulateBankTransfer: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      if (caller.livemode) {
        throw new ApplicationError('test_helpers.live_mode', 'Transfers can only be simulated in test mode; use a sk_test_ key. Nothing was changed.');
      }
      const call = { operation: 'test_helpers.simulate_transfer', input: SimulateBankTransferRequestSchema, request: req, output: SimulateBankTransferResponseSchema };
      return deps.idempotent(ctx, caller, call, async (tx, afterCommit) => {
        // Looked up in the caller's scope first: another merchant's or mode's order is unknown here.
        const found = await tx.orders.findById(caller, req.orderId);
        if (!found) throw new ApplicationError('order.not_found', `No such order: "${req.orderId}".`, 'id');
        await deps.receiveTransfer(tx, afterCommit, found.id);
        const details = await createGetOrder(tx)(caller, req.orderId);
        return create(SimulateBankTransferResponseSchema, { order: orderToProto(details.order, details.attempts, details.refunds, details.disputes) });
      });
    },
  };
}
