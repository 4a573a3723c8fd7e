import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PaymentLinkStatus, type PaymentLinkPageService } from '../../src/gen/checkout/v1/payment_link_pb.ts';
import { loadCheckoutAssets, type CheckoutAssets } from './assets.ts';
import { messagesFor, negotiateLocale } from './i18n.ts';
import type { PageContext } from './layout.ts';
import { renderClosedLinkPage, renderErrorPage, renderNotFoundPage, type ClosedLinkReason } from './notice-pages.ts';
import { applySecurityHeaders } from './security-headers.ts';

/** Link suffixes are base62 secrets: anything else is answered 404 without asking the core. */
const LINK_SUFFIX = /^[A-Za-z0-9]{1,64}$/;
/** The cookie, scoped to one link's path, that remembers the order this browser opened from it. */
export const LINK_ORDER_COOKIE = 'checkout_link_order';
const ORDER_ID = /^ord_[A-Za-z0-9]{1,64}$/;
/** As long as an order opened from a link takes payment (LINK_ORDER_TTL_MS). */
const COOKIE_MAX_AGE_S = 3600;

const CLOSED: Partial<Record<PaymentLinkStatus, ClosedLinkReason>> = {
  [PaymentLinkStatus.DEACTIVATED]: 'deactivated',
  [PaymentLinkStatus.EXPIRED]: 'expired',
  [PaymentLinkStatus.COMPLETED]: 'completed',
};

function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header('Content-Type', 'text/html; charset=utf-8').header('Cache-Control', 'no-store').header('Vary', 'Accept-Language').send(body);
}

/** The order id this browser's cookie remembers for the link, when it is shaped like one. */
function rememberedOrder(req: FastifyRequest): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === LINK_ORDER_COOKIE && value && ORDER_ID.test(value)) return value;
  }
  return undefined;
}

/**
 * Registers GET /l/:suffix, the page a payment link's URL opens. The core
 * (PaymentLinkPageService.OpenPaymentLink, in-process) answers the order to
 * pay: the one this browser opened before (a cookie on the link's path) while
 * it takes payment, or a fresh one; the customer is redirected (303) to its
 * hosted checkout, which is the normal one. A deactivated, expired or already
 * paid single-use link gets a page saying so in the customer's language (200,
 * as the checkout's expired page)
 * and nothing is created. The pages carry the checkout's security headers.
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
          res = await links.openPaymentLink({ suffix, orderId: rememberedOrder(req) }, { headers: { 'request-id': req.id } });
        } catch (err) {
          const code = ConnectError.from(err).code;
          if (code === Code.NotFound || code === Code.InvalidArgument) return sendHtml(reply, 404, renderNotFoundPage(ctx));
          throw err;
        }
        const closed = CLOSED[res.closed];
        if (closed) return sendHtml(reply, 200, renderClosedLinkPage(closed, { merchantName: res.merchantName, testMode: res.testMode, returnUrl: res.returnUrl }, ctx));
        if (!res.order) throw new Error('OpenPaymentLink answered neither an order nor why not');
        const secure = res.order.checkoutUrl.startsWith('https:') ? '; Secure' : '';
        return reply
          .code(303)
          .header('Set-Cookie', `${LINK_ORDER_COOKIE}=${res.order.id}; Path=/l/${suffix}; Max-Age=${COOKIE_MAX_AGE_S}; HttpOnly; SameSite=Lax${secure}`)
          .header('Cache-Control', 'no-store')
          .header('Location', res.order.checkoutUrl)
          .send();
      });
    },
    { prefix: '/l' },
  );
}
