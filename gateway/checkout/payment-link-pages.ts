import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PaymentLinkStatus, type PaymentLinkPageService } from '../../src/gen/checkout/v1/payment_link_pb.ts';
import { loadCheckoutAssets, type CheckoutAssets } from './assets.ts';
import { messagesFor, negotiateLocale } from './i18n.ts';
import type { PageContext } from './layout.ts';
import { renderClosedLinkPage, renderErrorPage, renderNotFoundPage, type ClosedLinkReason } from './notice-pages.ts';
import { renderPaymentPage } from './payment-page.ts';
import { applySecurityHeaders } from './security-headers.ts';

/** Link suffixes are base62 secrets: anything else is answered 404 without asking the core. */
const LINK_SUFFIX = /^[A-Za-z0-9]{1,64}$/;

const CLOSED: Partial<Record<PaymentLinkStatus, ClosedLinkReason>> = {
  [PaymentLinkStatus.DEACTIVATED]: 'deactivated',
  [PaymentLinkStatus.EXPIRED]: 'expired',
  [PaymentLinkStatus.COMPLETED]: 'completed',
};

function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header('Content-Type', 'text/html; charset=utf-8').header('Cache-Control', 'no-store').header('Vary', 'Accept-Language').send(body);
}

/**
 * Registers GET /l/:suffix, the page a payment link's URL opens. The core
 * (PaymentLinkPageService.OpenPaymentLink, in-process) only reads: an active
 * link gets the payment form for the link itself (the checkout's own payment
 * page, with the link's suffix where an order's checkout id and token would
 * be), and nothing is created; the order exists from the customer's first Pay
 * (the page's script calls StartPayment, then pays on the new order and moves
 * to its checkout URL). A deactivated, expired or already paid single-use link
 * gets a page saying so in the customer's language (200, as the checkout's
 * expired page). The pages carry the checkout's security headers.
 */
export function registerPaymentLinkPages(app: FastifyInstance, links: Client<typeof PaymentLinkPageService>, options: { readonly now?: () => Date; readonly assets?: CheckoutAssets } = {}): void {
  const assets = options.assets ?? loadCheckoutAssets();
  const now = options.now ?? (() => new Date());
  const urls = { script: assets.script.url, style: assets.style.url };
  const context = (req: FastifyRequest): PageContext => {
    const locale = negotiateLocale(req.headers['accept-language']);
    return { locale, messages: messagesFor(locale.language), assets: urls, now: now() };
  };

  app.register(
    async (scope) => {
      scope.addHook('onSend', async (_req, reply, payload) => {
        applySecurityHeaders(reply);
        return payload;
      });
      scope.setErrorHandler(async (err, req, reply) => {
        const code = ConnectError.from(err).code;
        req.log.error({ err }, 'payment link page failed');
        return sendHtml(reply, code === Code.Unavailable || code === Code.DeadlineExceeded ? 503 : 500, renderErrorPage(context(req), req.id));
      });
      scope.setNotFoundHandler(async (req, reply) => sendHtml(reply, 404, renderNotFoundPage(context(req))));

      scope.get<{ Params: { suffix: string } }>('/:suffix', async (req, reply) => {
        const ctx = context(req);
        const { suffix } = req.params;
        if (!LINK_SUFFIX.test(suffix)) return sendHtml(reply, 404, renderNotFoundPage(ctx));
        let res;
        try {
          res = await links.openPaymentLink({ suffix }, { headers: { 'request-id': req.id } });
        } catch (err) {
          const code = ConnectError.from(err).code;
          if (code === Code.NotFound || code === Code.InvalidArgument) return sendHtml(reply, 404, renderNotFoundPage(ctx));
          throw err;
        }
        const closed = CLOSED[res.closed];
        if (closed) return sendHtml(reply, 200, renderClosedLinkPage(closed, { merchantName: res.merchantName, testMode: res.testMode, returnUrl: res.returnUrl }, ctx));
        if (!res.checkout) throw new Error('OpenPaymentLink answered neither a checkout nor why not');
        return sendHtml(reply, 200, renderPaymentPage(res.checkout, ctx, suffix));
      });
    },
    { prefix: '/l' },
  );
}
