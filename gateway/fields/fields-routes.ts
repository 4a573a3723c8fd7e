import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkEmbedderOrigin } from '../../sdk/fields/protocol.ts';
import { loadAssetFile, pickEncoding, type Asset } from '../checkout/assets.ts';
import { SECURITY_HEADERS } from '../checkout/security-headers.ts';
import { FRAME_PAGES, renderFramePage, type FramePage } from './frame-pages.ts';

/** The embedded fields' files: the merchant's library, and the frames' script and stylesheet. */
export interface FieldsAssets {
  readonly library: Asset;
  readonly frameScript: Asset;
  readonly frameStyle: Asset;
}

/** Where the frames' hashed assets are served. */
export const FIELDS_ASSET_PREFIX = '/fields/assets/';

/** Reads sdk/fields/dist/*.js (built by `npm run build:fields`, checked in) and sdk/fields/frame.css once. */
export function loadFieldsAssets(): FieldsAssets {
  const dir = new URL('../../sdk/fields/', import.meta.url);
  const js = 'text/javascript; charset=utf-8';
  return {
    library: loadAssetFile(new URL('dist/fields.js', dir), '/js/', js),
    frameScript: loadAssetFile(new URL('dist/frame.js', dir), FIELDS_ASSET_PREFIX, js),
    frameStyle: loadAssetFile(new URL('frame.css', dir), FIELDS_ASSET_PREFIX, 'text/css; charset=utf-8'),
  };
}

/**
 * A frame page's Content-Security-Policy: like the hosted pages' (our own script, stylesheet and Connect
 * calls only), but it may be framed by exactly one origin: the one the merchant's page announced.
 */
export function frameContentSecurityPolicy(embedder: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'none'",
    `frame-ancestors ${embedder}`,
    "base-uri 'none'",
  ].join('; ');
}

function sendAsset(req: FastifyRequest, reply: FastifyReply, asset: Asset, headers: Record<string, string>): FastifyReply {
  const encoding = pickEncoding(req.headers['accept-encoding']);
  reply.headers(headers).header('Content-Type', asset.contentType).header('Vary', 'Accept-Encoding').header('X-Content-Type-Options', 'nosniff');
  if (encoding) reply.header('Content-Encoding', encoding);
  return reply.send(encoding === 'br' ? asset.brotli : encoding === 'gzip' ? asset.gzip : asset.body);
}

/**
 * Registers the embedded card fields: GET /js/fields.js (the merchant's library, loadable from any origin),
 * GET /fields/<card-number|card-expiry|card-cvc|returned>?origin=<the merchant page's origin> (the frames,
 * frameable by that origin only) and GET /fields/assets/<hashed name>. The hosted checkout pages keep
 * frame-ancestors 'none'.
 */
export function registerFieldsRoutes(app: FastifyInstance, assets: FieldsAssets = loadFieldsAssets()): void {
  const urls = { script: assets.frameScript.url, style: assets.frameStyle.url };
  const byName = new Map([assets.frameScript, assets.frameStyle].map((a) => [a.name, a]));
  const pages = new Map(Object.keys(FRAME_PAGES).map((page) => [page, renderFramePage(page as FramePage, urls)]));

  app.get('/js/fields.js', async (req, reply) =>
    sendAsset(req, reply, assets.library, {
      // Loaded by a <script> of the merchant's page: another origin, so not same-origin only.
      'Cross-Origin-Resource-Policy': 'cross-origin',
      'Access-Control-Allow-Origin': '*',
      // Not content-hashed (merchants link this URL), so cached briefly.
      'Cache-Control': 'public, max-age=300',
    }),
  );

  app.get<{ Params: { file: string } }>('/fields/assets/:file', async (req, reply) => {
    const asset = byName.get(req.params.file);
    if (!asset) return reply.code(404).headers(SECURITY_HEADERS).header('Content-Type', 'text/plain; charset=utf-8').send('Not found');
    return sendAsset(req, reply, asset, { 'Cross-Origin-Resource-Policy': 'same-origin', 'Cache-Control': 'public, max-age=31536000, immutable' });
  });

  app.get<{ Params: { page: string }; Querystring: { origin?: unknown } }>('/fields/:page', async (req, reply) => {
    const page = pages.get(req.params.page);
    const embedder = checkEmbedderOrigin(req.query.origin);
    if (!page || !embedder) {
      const why = page ? 'origin must be the embedding page\'s origin: https://…, or http://localhost / 127.x.x.x / [::1] in development.' : 'Not found';
      return reply.code(page ? 400 : 404).headers(SECURITY_HEADERS).header('Content-Type', 'text/plain; charset=utf-8').header('Cache-Control', 'no-store').send(why);
    }
    return reply
      .headers({
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': frameContentSecurityPolicy(embedder),
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Permissions-Policy': SECURITY_HEADERS['Permissions-Policy']!,
        // Framed by another origin, possibly one that requires CORP of what it embeds.
        'Cross-Origin-Resource-Policy': 'cross-origin',
        'Cache-Control': 'no-cache',
      })
      .send(page);
  });
}
