// The embedded card fields' library, loaded by the merchant's page from the checkout host (GET /js/fields.js).
// It mounts one iframe per field, served from the checkout host, and hears from them only state and results by
// postMessage: from the checkout origin, and from its own frames' windows. Card data never reaches this page.
import type { Brand, FieldErrorCode } from './card.ts';
import { checkEmbedderOrigin, CLIENT_SECRET, FIELD_KINDS, FRAME_PATHS, parseFrameMessage, PUBLISHABLE_KEY, tagged, type ConfirmResult, type FieldKind, type ParentMessage, type Redirect } from './protocol.ts';
import { checkStyle, type FieldStyle } from './style.ts';

/** Options of {@link CheckoutFields}. */
export interface CheckoutFieldsOptions {
  /** The merchant's publishable key, pk_test_… or pk_live_…. */
  readonly publishableKey: string;
  /** The order's client_secret, handed to the page by the merchant's server. */
  readonly clientSecret: string;
  /** The checkout host, e.g. https://pay.example.com; by default the origin this script was loaded from. */
  readonly checkoutHost?: string;
  /** The style of every field (whitelisted properties; see style.ts). */
  readonly style?: FieldStyle;
}

/** Options of one field. */
export interface FieldOptions {
  /** The field's accessible name (read by screen readers); a default in English otherwise. */
  readonly ariaLabel?: string;
  readonly placeholder?: string;
  /** Overrides the instance's style for this field. */
  readonly style?: FieldStyle;
}

/** What a `change` event carries: never the value. */
export interface FieldChange {
  readonly elementType: FieldKind;
  readonly empty: boolean;
  readonly complete: boolean;
  readonly brand: Brand;
  readonly error?: { readonly code: FieldErrorCode; readonly message: string };
}

export type FieldEvent = 'ready' | 'change' | 'focus' | 'blur' | 'error';
// Handlers take their event's payload; stored side by side, they are called with the payload of their event only.
type Handler = (payload: never) => void;

/** One mounted (or mountable) field. */
export interface FieldElement {
  /** Puts the field's iframe into the element (or the first element the selector finds). */
  mount(target: string | Element): FieldElement;
  on(event: 'change', handler: (change: FieldChange) => void): FieldElement;
  on(event: 'error', handler: (error: { code: string; message: string }) => void): FieldElement;
  on(event: 'ready' | 'focus' | 'blur', handler: () => void): FieldElement;
  off(event: FieldEvent, handler: Handler): FieldElement;
  focus(): void;
  clear(): void;
  unmount(): void;
}

/** What {@link CheckoutFields} answers. */
export interface CheckoutFieldsInstance {
  create(kind: FieldKind, options?: FieldOptions): FieldElement;
  /** Pays the order with the card in the fields; shows the issuer's 3-D Secure page in an overlay when it asks for it. */
  confirm(options: { readonly name: string }): Promise<ConfirmResult>;
}

const DEFAULT_LABELS: Record<FieldKind, string> = { cardNumber: 'Card number', cardExpiry: 'Expiry date (MM / YY)', cardCvc: 'Security code (CVC)' };
const DEFAULT_PLACEHOLDERS: Record<FieldKind, string> = { cardNumber: '1234 1234 1234 1234', cardExpiry: 'MM / YY', cardCvc: 'CVC' };
const ERROR_TEXT: Record<FieldErrorCode, string> = {
  card_number_incomplete: 'Your card number is incomplete.',
  card_number_invalid: 'Your card number is invalid.',
  card_expiry_incomplete: 'Your card\'s expiry date is incomplete.',
  card_expiry_invalid: 'Your card\'s expiry date is invalid.',
  card_expiry_past: 'Your card\'s expiry date is in the past.',
  card_cvc_incomplete: 'Your card\'s security code is incomplete.',
  card_cvc_invalid: 'Your card\'s security code is invalid.',
};

// The origin this script came from (captured while it runs, as document.currentScript is set only then).
const current = typeof document !== 'undefined' ? (document.currentScript as HTMLScriptElement | null) : null;
const SCRIPT_ORIGIN = current?.src ? new URL(current.src).origin : '';

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Creates the card fields of one order.
 * @throws TypeError when the key, client secret or checkout host is malformed; FieldStyleError for a style outside the whitelist.
 */
export function CheckoutFields(options: CheckoutFieldsOptions): CheckoutFieldsInstance {
  if (!PUBLISHABLE_KEY.test(String(options?.publishableKey))) throw new TypeError('CheckoutFields: publishableKey must be your publishable key (pk_test_… or pk_live_…), never a secret key.');
  if (!CLIENT_SECRET.test(String(options.clientSecret))) throw new TypeError('CheckoutFields: clientSecret must be the order\'s client_secret (ord_…_secret_…) from your server.');
  const host = checkEmbedderOrigin(String(options.checkoutHost ?? SCRIPT_ORIGIN).replace(/\/$/, ''));
  if (!host) throw new TypeError('CheckoutFields: checkoutHost must be an https origin (http on localhost), e.g. https://pay.example.com.');
  const baseStyle = checkStyle(options.style);
  const channel = randomHex(16);
  const frames = new Map<Window, Field>();
  const fields = new Map<FieldKind, Field>();
  let overlay: { root: HTMLElement; frame: HTMLIFrameElement; returnFocus: Element | null; inert: HTMLElement[] } | null = null;
  let pending: { id: number; resolve: (r: ConfirmResult) => void; timer: ReturnType<typeof setTimeout> } | null = null;
  let nextId = 1;

  const frameUrl = (path: string) => `${host}${path}?origin=${encodeURIComponent(location.origin)}#${channel}`;

  class Field implements FieldElement {
    readonly kind: FieldKind;
    readonly label: string;
    readonly placeholder: string;
    readonly style: FieldStyle;
    readonly handlers = new Map<FieldEvent, Set<Handler>>();
    frame: HTMLIFrameElement | null = null;
    ready = false;
    loadTimer: ReturnType<typeof setTimeout> | undefined;

    constructor(kind: FieldKind, o: FieldOptions) {
      this.kind = kind;
      this.label = typeof o.ariaLabel === 'string' && o.ariaLabel.trim() ? o.ariaLabel.trim().slice(0, 100) : DEFAULT_LABELS[kind];
      this.placeholder = typeof o.placeholder === 'string' ? o.placeholder.slice(0, 40) : DEFAULT_PLACEHOLDERS[kind];
      this.style = { ...baseStyle, ...checkStyle(o.style) };
    }

    mount(target: string | Element): FieldElement {
      const parent = typeof target === 'string' ? document.querySelector(target) : target;
      if (!parent) throw new TypeError(`CheckoutFields: nothing matches ${String(target)} to mount the ${this.kind} field in.`);
      if (this.frame) throw new TypeError(`CheckoutFields: the ${this.kind} field is already mounted.`);
      const frame = document.createElement('iframe');
      frame.src = frameUrl(FRAME_PATHS[this.kind]);
      frame.title = this.label;
      frame.setAttribute('frameborder', '0');
      frame.setAttribute('scrolling', 'no');
      frame.setAttribute('allowtransparency', 'true');
      frame.style.cssText = 'border:0;width:100%;height:44px;display:block;background:transparent;overflow:hidden';
      parent.appendChild(frame);
      this.frame = frame;
      frames.set(frame.contentWindow!, this);
      this.loadTimer = setTimeout(() => {
        if (!this.ready) this.emit('error', { code: 'frame_unavailable', message: `The ${this.kind} field did not load from ${host}.` });
      }, 20_000);
      return this;
    }

    on(event: FieldEvent, handler: Handler): FieldElement {
      if (!this.handlers.has(event)) this.handlers.set(event, new Set());
      this.handlers.get(event)!.add(handler);
      return this;
    }

    off(event: FieldEvent, handler: Handler): FieldElement {
      this.handlers.get(event)?.delete(handler);
      return this;
    }

    emit(event: FieldEvent, payload?: unknown): void {
      for (const handler of this.handlers.get(event) ?? []) (handler as (p: unknown) => void)(payload);
    }

    post(message: ParentMessage): void {
      this.frame?.contentWindow?.postMessage(tagged(message), host!);
    }

    focus(): void {
      this.post({ type: 'focus' });
    }

    clear(): void {
      this.post({ type: 'clear' });
    }

    unmount(): void {
      if (!this.frame) return;
      clearTimeout(this.loadTimer);
      for (const [w, f] of frames) if (f === this) frames.delete(w);
      this.frame.remove();
      this.frame = null;
      this.ready = false;
    }
  }

  const closeOverlay = () => {
    if (!overlay) return;
    overlay.root.remove();
    for (const el of overlay.inert) el.inert = false;
    const back = overlay.returnFocus;
    overlay = null;
    if (back instanceof HTMLElement) back.focus();
  };

  /**
   * Opens the issuer's page (3-D Secure) in a modal overlay: the frame navigates to it (GET), or a form of its
   * fields is submitted into the frame (POST). Its return leg ends on the checkout host's /fields/returned,
   * framed by this page's origin only, which tells us (the overlay's window, from the checkout origin) to read
   * the result. Close abandons the challenge.
   */
  const openOverlay = (redirect: Redirect) => {
    if (overlay) return;
    const root = document.createElement('div');
    root.setAttribute('role', 'dialog');
    root.setAttribute('aria-modal', 'true');
    root.setAttribute('aria-label', 'Confirm your payment with your bank');
    root.style.cssText = 'position:fixed;inset:0;z-index:2147483647;background:rgba(0,0,0,0.55);display:flex;flex-direction:column;align-items:center;justify-content:center;gap:8px';
    const frame = document.createElement('iframe');
    frame.name = `checkout-fields-${channel}`;
    frame.title = 'Payment authentication by your bank';
    frame.style.cssText = 'border:0;border-radius:8px;background:#fff;width:min(440px,calc(100vw - 32px));height:min(600px,calc(100vh - 80px))';
    const close = document.createElement('button');
    close.type = 'button';
    close.textContent = 'Cancel';
    close.style.cssText = 'font:inherit;padding:6px 16px;border-radius:6px;border:0;background:#fff;color:#1a1a1a;cursor:pointer';
    close.addEventListener('click', () => fields.get('cardNumber')?.post({ type: 'abandon' }));
    root.append(frame, close);
    // A modal: the rest of the page is out of reach (focus, pointer, screen readers) until the step ends.
    const inert = Array.from(document.body.children).filter((el): el is HTMLElement => el instanceof HTMLElement && !el.inert);
    for (const el of inert) el.inert = true;
    document.body.appendChild(root);
    overlay = { root, frame, returnFocus: document.activeElement, inert };
    frame.addEventListener('load', () => frame.focus());
    if (redirect.method === 'GET') {
      frame.src = redirect.url;
      return;
    }
    const form = document.createElement('form');
    form.method = 'post';
    form.action = redirect.url;
    form.target = frame.name;
    for (const [name, value] of Object.entries(redirect.fields)) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.appendChild(input);
    }
    root.appendChild(form);
    form.submit();
    form.remove();
  };

  window.addEventListener('message', (e) => {
    // Only the checkout origin, and only our own frames' windows.
    if (e.origin !== host) return;
    if (overlay && e.source === overlay.frame.contentWindow) {
      // The issuer sent the customer back (the return page, on the checkout host): the number frame reads the result.
      if (parseFrameMessage(e.data)?.type === 'returned' && pending) fields.get('cardNumber')?.post({ type: 'returned' });
      return;
    }
    const field = e.source ? frames.get(e.source as Window) : undefined;
    if (!field) return;
    const m = parseFrameMessage(e.data);
    if (!m) return;
    switch (m.type) {
      case 'loaded': {
        const credentials = field.kind === 'cardNumber' ? { publishableKey: options.publishableKey, clientSecret: options.clientSecret } : {};
        field.post({ type: 'init', label: field.label, placeholder: field.placeholder, style: field.style, ...credentials });
        return;
      }
      case 'ready':
        clearTimeout(field.loadTimer);
        if (field.frame && m.height > 0) field.frame.style.height = `${m.height}px`;
        if (!field.ready) {
          field.ready = true;
          field.emit('ready');
        }
        return;
      case 'change': {
        const change: FieldChange = { elementType: field.kind, empty: m.empty, complete: m.complete, brand: m.brand, ...(m.error ? { error: { code: m.error, message: ERROR_TEXT[m.error] } } : {}) };
        field.emit('change', change);
        return;
      }
      case 'focus':
      case 'blur':
        field.emit(m.type);
        return;
      case 'redirect':
        if (field.kind === 'cardNumber' && pending) openOverlay(m.redirect);
        return;
      case 'returned':
        return;
      case 'result':
        if (field.kind !== 'cardNumber' || !pending || pending.id !== m.id) return;
        clearTimeout(pending.timer);
        closeOverlay();
        pending.resolve(m.result);
        pending = null;
        return;
    }
  });

  return {
    create(kind, o = {}) {
      if (!FIELD_KINDS.includes(kind)) throw new TypeError(`CheckoutFields: create() takes ${FIELD_KINDS.join(', ')}; got ${String(kind)}.`);
      if (fields.has(kind)) throw new TypeError(`CheckoutFields: a ${kind} field already exists.`);
      const field = new Field(kind, o);
      fields.set(kind, field);
      return field;
    },

    confirm({ name } = { name: '' }) {
      const number = fields.get('cardNumber');
      if (!number?.ready) return Promise.resolve({ status: 'failed', code: 'fields_not_ready', message: 'Mount the card fields and wait for their ready event before confirming.' });
      if (pending) return Promise.resolve({ status: 'failed', code: 'confirm_in_progress', message: 'A payment is already being confirmed.' });
      if (typeof name !== 'string' || !name.trim()) return Promise.resolve({ status: 'failed', code: 'card_name_invalid', message: 'Pass the name on the card: confirm({ name }).' });
      return new Promise<ConfirmResult>((resolve) => {
        const id = nextId++;
        // A payment waits for the customer in the 3-D Secure step: a generous limit, not a timing.
        const timer = setTimeout(() => {
          closeOverlay();
          pending = null;
          resolve({ status: 'failed', code: 'timeout', message: 'No answer from the payment fields within 10 minutes.' });
        }, 600_000);
        pending = { id, resolve, timer };
        number.post({ type: 'confirm', id, name: name.trim().slice(0, 100) });
      });
    },
  };
}
