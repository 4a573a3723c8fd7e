// The messages between the merchant's page and the field frames (postMessage), and between the frames
// themselves (a BroadcastChannel of the checkout origin). Pure (no DOM): every message received is checked
// here, field by field, before anything acts on it; anything else is dropped.
import { BRANDS, FIELD_ERROR_CODES, type Brand, type FieldErrorCode } from './card.ts';
import { checkStyle, type FieldStyle } from './style.ts';

/** Marks our messages among whatever else a page posts. */
export const TAG = 'checkout-fields/1';

/** The three field kinds, as the merchant names them. */
export type FieldKind = 'cardNumber' | 'cardExpiry' | 'cardCvc';
export const FIELD_KINDS: readonly FieldKind[] = ['cardNumber', 'cardExpiry', 'cardCvc'];

/** The path of each field's frame page on the checkout host. */
export const FRAME_PATHS: Readonly<Record<FieldKind, string>> = {
  cardNumber: '/fields/card-number',
  cardExpiry: '/fields/card-expiry',
  cardCvc: '/fields/card-cvc',
};

/**
 * Where the issuer asks to send the customer (3-D Secure): the page opens it in its overlay, by
 * navigation (GET) or by a form of `fields` submitted to it (POST). The return leg ends on the frame
 * page /fields/returned, which posts {@link FrameMessage} `returned` to the page.
 */
export interface Redirect {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly fields: Readonly<Record<string, string>>;
}

/** What confirm() resolves with. */
export type ConfirmResult =
  | { readonly status: 'paid'; readonly orderId: string }
  /** The issuer or the acquirer declined: the customer can try another card while attempts remain. */
  | { readonly status: 'declined'; readonly code: string; readonly message: string; readonly attemptsRemaining: number }
  /** Not paid and not a decline: a field is incomplete, the service refused, or it could not be reached. */
  | { readonly status: 'failed'; readonly code: string; readonly message: string };

/** A message of a field frame to the merchant's page. */
export type FrameMessage =
  | { readonly type: 'loaded' }
  | { readonly type: 'ready'; readonly height: number }
  | { readonly type: 'change'; readonly empty: boolean; readonly complete: boolean; readonly brand: Brand; readonly error: FieldErrorCode | '' }
  | { readonly type: 'focus' }
  | { readonly type: 'blur' }
  /** The number frame: the issuer's challenge, to open in the overlay. */
  | { readonly type: 'redirect'; readonly redirect: Redirect }
  /** The overlay's return page: the redirect came back, the result can be read. */
  | { readonly type: 'returned' }
  | { readonly type: 'result'; readonly id: number; readonly result: ConfirmResult };

/** What the page sends a frame once the frame says it has loaded. */
export interface InitMessage {
  readonly type: 'init';
  readonly label: string;
  readonly placeholder: string;
  readonly style: FieldStyle;
  /** Only to the card number frame, which makes the payment calls. */
  readonly publishableKey?: string;
  readonly clientSecret?: string;
}

/** A message of the merchant's page to a field frame. */
export type ParentMessage =
  | InitMessage
  | { readonly type: 'confirm'; readonly id: number; readonly name: string }
  | { readonly type: 'focus' }
  | { readonly type: 'clear' }
  /** To the number frame: the overlay came back from the redirect (read the result), or the customer closed it. */
  | { readonly type: 'returned' }
  | { readonly type: 'abandon' };

/** A message between frames of the checkout origin: values are asked for by the number frame at confirm(). */
export type ChannelMessage =
  | { readonly type: 'collect'; readonly nonce: string }
  | { readonly type: 'value'; readonly nonce: string; readonly field: 'cardExpiry' | 'cardCvc'; readonly value: string }
  | { readonly type: 'brand'; readonly brand: Brand }
  | { readonly type: 'invalid'; readonly field: FieldKind; readonly error: FieldErrorCode };

export const PUBLISHABLE_KEY = /^pk_(test|live)_[A-Za-z0-9]{8,128}$/;
export const CLIENT_SECRET = /^ord_[A-Za-z0-9]{8,64}_secret_[A-Za-z0-9_-]{16,128}$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isCount = (v: unknown, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;
const isCode = (v: unknown): v is string => typeof v === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(v);

/** Wraps a message with {@link TAG} for sending. */
export function tagged<T extends { type: string }>(message: T): T & { tag: string } {
  return { tag: TAG, ...message };
}

/** An issuer's page the overlay may open: an https URL (http on a loopback host, in development), no credentials. */
export function checkRedirectUrl(value: unknown): string | null {
  if (!isText(value, 4096)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  return !url.username && !url.password && checkEmbedderOrigin(url.origin) ? url.toString() : null;
}

function checkRedirect(v: unknown): Redirect | null {
  if (!isObject(v) || (v.method !== 'GET' && v.method !== 'POST') || !isObject(v.fields)) return null;
  const url = checkRedirectUrl(v.url);
  const fields = Object.entries(v.fields);
  if (!url || fields.length > 50 || !fields.every(([k, f]) => isText(k, 200) && isText(f, 8192))) return null;
  return { url, method: v.method, fields: Object.fromEntries(fields) as Record<string, string> };
}

function checkResult(v: unknown): ConfirmResult | null {
  if (!isObject(v)) return null;
  if (v.status === 'paid' && isText(v.orderId, 80)) return { status: 'paid', orderId: v.orderId };
  if (v.status === 'declined' && isCode(v.code) && isText(v.message, 300) && isCount(v.attemptsRemaining, 1000)) return { status: 'declined', code: v.code, message: v.message, attemptsRemaining: v.attemptsRemaining };
  if (v.status === 'failed' && isCode(v.code) && isText(v.message, 300)) return { status: 'failed', code: v.code, message: v.message };
  return null;
}

/** Checks a message a frame posted to the page; null when it is not one of ours or not well formed. */
export function parseFrameMessage(data: unknown): FrameMessage | null {
  if (!isObject(data) || data.tag !== TAG) return null;
  switch (data.type) {
    case 'loaded':
    case 'focus':
    case 'blur':
    case 'returned':
      return { type: data.type };
    case 'redirect': {
      const redirect = checkRedirect(data.redirect);
      return redirect ? { type: 'redirect', redirect } : null;
    }
    case 'ready':
      return isCount(data.height, 2000) ? { type: 'ready', height: data.height } : null;
    case 'change': {
      const { empty, complete, brand, error } = data;
      if (!isBool(empty) || !isBool(complete) || !BRANDS.includes(brand as Brand)) return null;
      if (error !== '' && !FIELD_ERROR_CODES.includes(error as FieldErrorCode)) return null;
      return { type: 'change', empty, complete, brand: brand as Brand, error: error as FieldErrorCode | '' };
    }
    case 'result': {
      const result = checkResult(data.result);
      return result && isCount(data.id, Number.MAX_SAFE_INTEGER) ? { type: 'result', id: data.id, result } : null;
    }
    default:
      return null;
  }
}

/** Checks a message the page posted to a frame; null when it is not one of ours or not well formed. */
export function parseParentMessage(data: unknown): ParentMessage | null {
  if (!isObject(data) || data.tag !== TAG) return null;
  switch (data.type) {
    case 'init': {
      if (!isText(data.label, 100) || !isText(data.placeholder, 40)) return null;
      let style: FieldStyle;
      try {
        style = checkStyle(data.style);
      } catch {
        return null;
      }
      const init: InitMessage = { type: 'init', label: data.label, placeholder: data.placeholder, style };
      if (data.publishableKey === undefined && data.clientSecret === undefined) return init;
      if (!isText(data.publishableKey, 200) || !PUBLISHABLE_KEY.test(data.publishableKey) || !isText(data.clientSecret, 300) || !CLIENT_SECRET.test(data.clientSecret)) return null;
      return { ...init, publishableKey: data.publishableKey, clientSecret: data.clientSecret };
    }
    case 'confirm':
      return isCount(data.id, Number.MAX_SAFE_INTEGER) && isText(data.name, 200) ? { type: 'confirm', id: data.id, name: data.name } : null;
    case 'focus':
    case 'clear':
    case 'returned':
    case 'abandon':
      return { type: data.type };
    default:
      return null;
  }
}

/** Checks a message of the frames' channel; null when it is not well formed. */
export function parseChannelMessage(data: unknown): ChannelMessage | null {
  if (!isObject(data) || data.tag !== TAG) return null;
  switch (data.type) {
    case 'collect':
      return isText(data.nonce, 64) ? { type: 'collect', nonce: data.nonce } : null;
    case 'value':
      return isText(data.nonce, 64) && (data.field === 'cardExpiry' || data.field === 'cardCvc') && isText(data.value, 32) ? { type: 'value', nonce: data.nonce, field: data.field, value: data.value } : null;
    case 'brand':
      return BRANDS.includes(data.brand as Brand) ? { type: 'brand', brand: data.brand as Brand } : null;
    case 'invalid':
      return FIELD_KINDS.includes(data.field as FieldKind) && FIELD_ERROR_CODES.includes(data.error as FieldErrorCode) ? { type: 'invalid', field: data.field as FieldKind, error: data.error as FieldErrorCode } : null;
    default:
      return null;
  }
}

/**
 * The origin a page announces for itself, if it is one the fields may be embedded in: https, or http on a
 * loopback host (development); a bare origin (no path, credentials, query) exactly as the browser writes it.
 */
export function checkEmbedderOrigin(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 255) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.origin !== value) return null;
  // A host name, an IPv4 or a bracketed IPv6 address, nothing else: the origin goes into frame-ancestors,
  // where `*`, quotes or commas would widen it (https://* lets any site frame the fields).
  if (!/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/.test(url.hostname)) return null;
  if (url.protocol === 'https:') return value;
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname);
  return url.protocol === 'http:' && loopback ? value : null;
}
