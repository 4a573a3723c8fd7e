import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { html } from './html.ts';
import { fill, messagesFor, negotiateLocale } from './i18n.ts';
import { renderDocument, type AssetUrls, type PageContext } from './layout.ts';
import { renderNotFoundPage } from './notice-pages.ts';
import { applySecurityHeaders, CONTENT_SECURITY_POLICY } from './security-headers.ts';
import { checkEmbedderOrigin } from '../../sdk/fields/protocol.ts';
import { FIELDS_ORIGIN_PARAM } from '../../src/modules/payment/application/payment-instrument.ts';

/** What the simulated issuer's page shows. */
export interface SimulatedIssuerView {
  readonly processorRef: string;
  readonly testCode: string;
  /** The return leg the answer goes to, as the simulator signed it into the link. */
  readonly returnUrl?: string;
}

/**
 * Where the return leg of an embedded fields' payment ends: their frame page that tells the merchant's
 * page (framed by that origin alone) to read the result. Undefined unless the origin is one the fields
 * may be embedded in.
 */
export function fieldsReturnTarget(fieldsOrigin: string | undefined): string | undefined {
  const origin = checkEmbedderOrigin(fieldsOrigin);
  return origin ? `/fields/returned?origin=${encodeURIComponent(origin)}` : undefined;
}

/**
 * The merchant origin a challenge of the embedded fields may be framed by: the one in its return leg,
 * which the simulator signed into the link (so a link cannot be re-pointed at another site), and which
 * must be an origin the fields may be embedded in. Undefined for the hosted page's challenges.
 */
export function issuerFramerOf(view: SimulatedIssuerView): string | undefined {
  if (!view.returnUrl) return undefined;
  try {
    return checkEmbedderOrigin(new URL(view.returnUrl).searchParams.get(FIELDS_ORIGIN_PARAM)) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The simulated processors' issuer, as the gateway serves it (test mode only): the page of a
 * challenge whose link is the simulator's own (signed), and the return leg the customer's answer
 * sends them to. Undefined for a forged or altered link.
 */
export interface SimulatedIssuer {
  page(processorRef: string, query: Readonly<Record<string, string | undefined>>): SimulatedIssuerView | undefined;
  answer(processorRef: string, query: Readonly<Record<string, string | undefined>>, code: string): string | undefined;
}

/** The path of the simulated issuer's page; the processor reference follows it. */
export const SIMULATED_ISSUER_PREFIX = '/simulator/issuer';

/** A form's fields: application/x-www-form-urlencoded, at most 64 KiB, read into a flat record (the last of a repeated name wins). */
export function registerFormBody(scope: FastifyInstance): void {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 65_536 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}

function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header('Content-Type', 'text/html; charset=utf-8').header('Cache-Control', 'no-store').header('Vary', 'Accept-Language').send(body);
}

/** The issuer's page: test-mode banner, the test code in the customer's language, a code field, Confirm and Cancel. */
export function renderIssuerPage(ctx: PageContext, view: SimulatedIssuerView, action: string): string {
  const m = ctx.messages;
  const main = html`<main id="issuer">
<form id="issuer-form" method="post" action="${action}">
<p class="issuer">${m.challengeIssuer}</p>
<h1 id="challenge-title">${m.challengeTitle}</h1>
<p id="challenge-hint" class="hint">${fill(m.client.challengeTestHint, { code: view.testCode })}</p>
<div class="field"><label for="challenge-code">${m.challengeCode}</label><input id="challenge-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="12" aria-describedby="challenge-hint"></div>
<div class="actions"><button type="submit" id="challenge-submit">${m.challengeSubmit}</button><button type="submit" id="challenge-cancel" name="cancel" value="1" class="secondary">${m.challengeCancel}</button></div>
</form>
</main>`;
  return renderDocument(ctx, { title: m.challengeTitle, main, testMode: true });
}

/**
 * Registers the simulated issuer's page: GET /simulator/issuer/:ref shows it (for a link the
 * simulator signed), POST answers it and sends the customer (303) to the checkout's return leg
 * with the issuer's signed result, as a real issuer's page does. Same security headers and CSP as
 * the checkout pages.
 */
export function registerSimulatedIssuer(app: FastifyInstance, issuer: SimulatedIssuer, assets: AssetUrls, now: () => Date = () => new Date()): void {
  const context = (req: FastifyRequest): PageContext => {
    const locale = negotiateLocale(req.headers['accept-language']);
    return { locale, messages: messagesFor(locale.language), assets, now: now() };
  };
  const queryOf = (req: FastifyRequest) => req.query as Readonly<Record<string, string | undefined>>;
  app.register(
    async (scope) => {
      registerFormBody(scope);
      const framers = new WeakMap<FastifyRequest, string>();
      scope.addHook('onSend', async (req, reply, payload) => {
        applySecurityHeaders(reply);
        const framer = framers.get(req);
        if (framer) {
          // The embedded fields' overlay: framed by the merchant origin of the signed link, and by no other.
          reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY.replace("frame-ancestors 'none'", `frame-ancestors ${framer}`));
          reply.header('Cross-Origin-Resource-Policy', 'cross-origin');
          reply.removeHeader('X-Frame-Options');
        }
        return payload;
      });
      scope.get<{ Params: { ref: string } }>('/:ref', async (req, reply) => {
        const view = issuer.page(req.params.ref, queryOf(req));
        if (!view) return sendHtml(reply, 404, renderNotFoundPage(context(req)));
        const framer = issuerFramerOf(view);
        if (framer) framers.set(req, framer);
        return sendHtml(reply, 200, renderIssuerPage(context(req), view, req.url));
      });
      scope.post<{ Params: { ref: string }; Body: Record<string, string> | undefined }>('/:ref', async (req, reply) => {
        const form = req.body ?? {};
        const code = form.cancel ? '' : (form.code ?? '');
        const target = issuer.answer(req.params.ref, queryOf(req), code);
        if (!target) return sendHtml(reply, 404, renderNotFoundPage(context(req)));
        return reply.code(303).header('Location', target).header('Cache-Control', 'no-store').send();
      });
    },
    { prefix: SIMULATED_ISSUER_PREFIX },
  );
}
