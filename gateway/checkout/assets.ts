import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** A static file of the checkout pages, held in memory with its precompressed forms. */
export interface Asset {
  /** File name with its content hash, e.g. "checkout-1a2b3c4d5e6f.js". */
  readonly name: string;
  /** Where the pages link it: /c/assets/<name>. */
  readonly url: string;
  readonly contentType: string;
  readonly body: Buffer;
  readonly gzip: Buffer;
  readonly brotli: Buffer;
}

/** The page script and stylesheet. */
export interface CheckoutAssets {
  readonly script: Asset;
  readonly style: Asset;
  /** Looks an asset up by its hashed file name. */
  byName(name: string): Asset | undefined;
}

/** URL path under which assets are served. */
export const ASSET_PREFIX = '/c/assets/';

/** Reads a static file, names it by content hash under `prefix`, and compresses it ahead of time. */
export function loadAssetFile(fileUrl: URL, prefix: string, contentType: string): Asset {
  const body = readFileSync(fileUrl);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const file = fileUrl.pathname.slice(fileUrl.pathname.lastIndexOf('/') + 1);
  const dot = file.lastIndexOf('.');
  const name = `${file.slice(0, dot)}-${hash}${file.slice(dot)}`;
  return {
    name,
    url: prefix + name,
    contentType,
    body,
    gzip: gzipSync(body, { level: 9 }),
    brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  };
}

function loadAsset(file: string, contentType: string): Asset {
  return loadAssetFile(new URL(`./assets/${file}`, import.meta.url), ASSET_PREFIX, contentType);
}

/**
 * Reads the page script and stylesheet once (at startup), names them by
 * content hash so they can be cached for a year, and compresses them ahead of time.
 */
export function loadCheckoutAssets(): CheckoutAssets {
  const script = loadAsset('checkout.js', 'text/javascript; charset=utf-8');
  const style = loadAsset('checkout.css', 'text/css; charset=utf-8');
  const all = new Map([script, style].map((asset) => [asset.name, asset]));
  return { script, style, byName: (name) => all.get(name) };
}

/** The best precompressed form an Accept-Encoding header allows: brotli, gzip, or none. */
export function pickEncoding(acceptEncoding: string | undefined): 'br' | 'gzip' | undefined {
  if (!acceptEncoding) return undefined;
  const accepted = new Set<string>();
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [coding = '', ...params] = part.trim().split(';');
    const refused = params.some((p) => /^\s*q\s*=\s*0(?:\.0{0,3})?\s*$/.test(p));
    if (!refused) accepted.add(coding.trim());
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}
