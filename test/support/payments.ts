import { createClient, createContextValues, createRouterTransport, type ConnectRouter } from '@connectrpc/connect';
import { CheckoutService, type SubmitCardPaymentResponse } from '../../src/gen/checkout/v1/checkout_pb.ts';
import type { SandboxCredentials } from '../../src/modules/merchant/application/create-sandbox.ts';
import { HOSTED_PAGE } from '../../src/kernel/application/request-context.ts';
import { createInProcessTransport } from '../../gateway/in-process-transport.ts';

/**
 * The checkout token of an order's hosted page, as the page gets it: GetCheckout called in process
 * by the page's own render (HOSTED_PAGE), the one call that answers it (GET /c/<id> carries it in
 * its HTML). Over the network GetCheckout answers no token.
 */
export async function pageToken(routes: (router: ConnectRouter) => void, checkoutId: string): Promise<string> {
  const page = createClient(CheckoutService, createInProcessTransport(routes));
  return (await page.getCheckout({ checkoutId }, { contextValues: createContextValues().set(HOSTED_PAGE, true) })).checkout!.checkoutToken;
}

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
  const token = await pageToken(routes, checkoutId);
  const card = shop.test_cards.find((c) => c.behaviour === (options.behaviour ?? 'approved'))!;
  return checkout.submitCardPayment(
    { checkoutId, submissionId: options.submissionId ?? `sub-${orderId}`, card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' } },
    { headers: { 'checkout-token': token } },
  );
}

/** The checkout token a hosted page's HTML carries for its script (GET /c/<checkout id> of a payable order). */
export function tokenInPage(html: string): string {
  const token = /<main id="checkout"[^>]* data-token="([^"]*)"/.exec(html)?.[1];
  if (!token) throw new Error('the page carries no checkout token');
  return token;
}

/** The checkout token of an order's hosted page at `base` (a running service), read from its HTML as the browser does. */
export async function pageTokenAt(base: string, checkoutId: string): Promise<string> {
  return tokenInPage(await (await fetch(`${base}/c/${checkoutId}`)).text());
}
