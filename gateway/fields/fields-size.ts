import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { loadFieldsAssets, type FieldsAssets } from './fields-routes.ts';
import { FRAME_PAGES, renderFramePage, type FramePage } from './frame-pages.ts';

/** Bytes a browser transfers for the fields' first load (no cache), by encoding of the scripts and stylesheet. */
export interface FieldsFirstLoad {
  /** The merchant's library, /js/fields.js. */
  readonly library: number;
  /** One frame: its HTML page (sent as is) and the frame script and stylesheet. */
  readonly oneFrame: number;
  /** The library and the three field frames (the frame script and stylesheet fetched once, as they share one URL). */
  readonly total: number;
}

/** Measures {@link FieldsFirstLoad} for brotli, gzip and no compression, from the assets the gateway serves. */
export function measureFieldsFirstLoad(assets: FieldsAssets = loadFieldsAssets()): Record<'br' | 'gzip' | 'identity', FieldsFirstLoad> {
  const urls = { script: assets.frameScript.url, style: assets.frameStyle.url };
  const pages = (['card-number', 'card-expiry', 'card-cvc'] as FramePage[]).map((p) => Buffer.byteLength(renderFramePage(p, urls)));
  const size = (a: FieldsAssets['library'], enc: 'br' | 'gzip' | 'identity') => (enc === 'br' ? a.brotli : enc === 'gzip' ? a.gzip : a.body).length;
  const measure = (enc: 'br' | 'gzip' | 'identity'): FieldsFirstLoad => {
    const frameAssets = size(assets.frameScript, enc) + size(assets.frameStyle, enc);
    const library = size(assets.library, enc);
    return { library, oneFrame: pages[0]! + frameAssets, total: library + frameAssets + pages.reduce((a, b) => a + b, 0) };
  };
  return { br: measure('br'), gzip: measure('gzip'), identity: measure('identity') };
}

/** The frame pages compressed, for the record: the gateway sends them as is (they are under 1 KB). */
export function framePageSizes(assets: FieldsAssets = loadFieldsAssets()): Record<string, { raw: number; gzip: number; br: number }> {
  const urls = { script: assets.frameScript.url, style: assets.frameStyle.url };
  return Object.fromEntries(
    Object.keys(FRAME_PAGES).map((p) => {
      const body = Buffer.from(renderFramePage(p as FramePage, urls));
      return [p, { raw: body.length, gzip: gzipSync(body, { level: 9 }).length, br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length }];
    }),
  );
}
