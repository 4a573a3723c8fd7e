import { createClient, createRouterTransport, type ConnectRouter } from '@connectrpc/connect';
import { CheckoutService, type SubmitCardPaymentResponse } from '../../src/gen/checkout/v1/checkout_pb.ts';
import type { SandboxCredentials } from '../../src/application/merchant/create-sandbox.ts';

/**
 * Pays an order on its checkout, as the page does: the sandbox's test card of `behaviour`, through
 * CheckoutService with the page's token. Answers the checkout's response; a refusal rejects.
 */
export async function payWithTestCard(
  routes: (router: ConnectRouter) => void,
  shop: SandboxCredentials,
  orderId: string,
  options: { behaviour?: string; submissionId?: string } = {},
): Promise<SubmitCardPaymentResponse> {
  const checkout = createClient(CheckoutService, createRouterTransport(routes));
  const checkoutId = orderId.slice(4);
  const token = (await checkout.getCheckout({ checkoutId })).checkout!.checkoutToken;
  const card = shop.test_cards.find((c) => c.behaviour === (options.behaviour ?? 'approved'))!;
  return checkout.submitCardPayment(
    { checkoutId, submissionId: options.submissionId ?? `sub-${orderId}`, card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' } },
    { headers: { 'checkout-token': token } },
  );
}
