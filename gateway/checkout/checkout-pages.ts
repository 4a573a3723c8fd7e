import { Code, ConnectError, createContextValues, type Client } from '@connectrpc/connect';
import { HOSTED_PAGE } from '../../src/kernel/application/request-context.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CheckoutService } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { loadCheckoutAssets, pickEncoding, type CheckoutAssets } from './assets.ts';
import { messagesFor, negotiateLocale } from './i18n.ts';
import type { PageContext } from './layout.ts';
import { renderErrorPage, renderNotFoundPage } from './notice-pages.ts';
import { renderCheckout } from './render-checkout.ts';
import { applySecurityHeaders } from './security-headers.ts';
import { fieldsReturnTarget, registerFormBody } from './simulated-issuer-page.ts';
import { FIELDS_ORIGIN_PARAM } from '../../src/modules/payment/application/payment-instrument.ts';

/** Options of {@link registerCheckoutPages}; tests and benchmarks replace the clock or the assets. */
export interface CheckoutPagesOptions {
  readonly now?: () => Date;
  readonly assets?: CheckoutAssets;
}

/** Checkout ids are the order id's suffix: short base62, so anything else is answered 404 without asking the core. */
const CHECKOUT_ID = /^[A-Za-z0-9_-]{1,64}$/;

function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Vary', 'Accept-Language')
    .send(body);
}

/**
 * Registers the hosted checkout pages under /c: GET /c/:checkoutId (payment
 * page, receipt or expired page, from CheckoutService.GetCheckout called
 * in-process) and GET /c/assets/<hashed name> (the page script and
 * stylesheet). Every response of the scope, errors and 404s included, is
 * HTML or an asset with the security headers; the payment calls themselves
 * go from the browser to the Connect mount.
 */
export function registerCheckoutPages(app: FastifyInstance, checkout: Client<typeof CheckoutService>, options: CheckoutPagesOptions = {}): void {
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
        req.log.error({ err }, 'checkout page failed');
        return sendHtml(reply, code === Code.Unavailable || code === Code.DeadlineExceeded ? 503 : 500, renderErrorPage(context(req), req.id));
      });

      scope.setNotFoundHandler(async (req, reply) => sendHtml(reply, 404, renderNotFoundPage(context(req))));
      registerFormBody(scope);

      // The return leg of a redirect (3-D Secure): the processor sends the customer back here, by GET
      // (query) or POST (form), with what completes the payment; then the page shows where it stands.
      const returnLeg = async (req: FastifyRequest<{ Params: { checkoutId: string; attemptId: string } }>, reply: FastifyReply, params: Record<string, string>) => {
        const { checkoutId, attemptId } = req.params;
        if (!CHECKOUT_ID.test(checkoutId) || !CHECKOUT_ID.test(attemptId)) return sendHtml(reply, 404, renderNotFoundPage(context(req)));
        // A payment of the embedded fields: our own parameter (the merchant origin), not the processor's.
        const { [FIELDS_ORIGIN_PARAM]: fieldsOrigin, ...processorParams } = params;
        const fieldsPage = fieldsReturnTarget(fieldsOrigin);
        try {
          await checkout.completeRedirect({ checkoutId, attemptId, params: processorParams }, { headers: { 'request-id': req.id } });
        } catch (err) {
          const code = ConnectError.from(err).code;
          if (!fieldsPage && (code === Code.NotFound || code === Code.InvalidArgument)) return sendHtml(reply, 404, renderNotFoundPage(context(req)));
          // Refused (expired, already paid, still processing): the checkout page tells the customer where it stands.
          if (code !== Code.NotFound && code !== Code.InvalidArgument && code !== Code.FailedPrecondition && code !== Code.Aborted && code !== Code.Unavailable) throw err;
        }
        // The fields' overlay ends on their frame page, which tells the merchant's page (that origin alone) to read the result.
        return reply.code(303).header('Location', fieldsPage ?? `/c/${encodeURIComponent(checkoutId)}`).header('Cache-Control', 'no-store').send();
      };
      const fieldsOf = (value: unknown): Record<string, string> =>
        Object.fromEntries(Object.entries((value ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
      scope.get<{ Params: { checkoutId: string; attemptId: string } }>('/:checkoutId/return/:attemptId', (req, reply) => returnLeg(req, reply, fieldsOf(req.query)));
      scope.post<{ Params: { checkoutId: string; attemptId: string } }>('/:checkoutId/return/:attemptId', (req, reply) => returnLeg(req, reply, { ...fieldsOf(req.query), ...fieldsOf(req.body) }));

      scope.get<{ Params: { file: string } }>('/assets/:file', async (req, reply) => {
        const asset = assets.byName(req.params.file);
        if (!asset) return sendHtml(reply, 404, renderNotFoundPage(context(req)));
        const encoding = pickEncoding(req.headers['accept-encoding']);
        reply
          .header('Content-Type', asset.contentType)
          .header('Cache-Control', 'public, max-age=31536000, immutable')
          .header('Vary', 'Accept-Encoding');
        if (encoding) reply.header('Content-Encoding', encoding);
        return reply.send(encoding === 'br' ? asset.brotli : encoding === 'gzip' ? asset.gzip : asset.body);
      });

      scope.get<{ Params: { checkoutId: string } }>('/:checkoutId', async (req, reply) => {
        const ctx = context(req);
        const { checkoutId } = req.params;
        if (!CHECKOUT_ID.test(checkoutId)) return sendHtml(reply, 404, renderNotFoundPage(ctx));
        let res;
        try {
          // The page's own render: the one call GetCheckout answers the checkout token to (for the page's script).
          res = await checkout.getCheckout({ checkoutId }, { headers: { 'request-id': req.id }, contextValues: createContextValues().set(HOSTED_PAGE, true) });
        } catch (err) {
          const code = ConnectError.from(err).code;
          if (code === Code.NotFound || code === Code.InvalidArgument) return sendHtml(reply, 404, renderNotFoundPage(ctx));
          throw err;
        }
        if (!res.checkout) throw new Error('GetCheckout answered without a checkout');
        return sendHtml(reply, 200, renderCheckout(res.checkout, ctx));
      });
    },
    { prefix: '/c' },
  );
}
