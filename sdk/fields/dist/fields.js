// Built from sdk/fields/fields.ts by `npm run build:fields`; do not edit.
(function () {
'use strict';
// card.ts
const FIELD_ERROR_CODES = ['card_number_incomplete', 'card_number_invalid', 'card_expiry_incomplete', 'card_expiry_invalid', 'card_expiry_past', 'card_cvc_incomplete', 'card_cvc_invalid'];
const BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'unknown'];
const LENGTHS = {
    visa: [13, 16, 19],
    mastercard: [16],
    amex: [15],
    discover: [16, 17, 18, 19],
    unknown: [12, 13, 14, 15, 16, 17, 18, 19],
};
function cardDigits(value) {
    const digits = value.replace(/[\s-]/g, '');
    return /^\d*$/.test(digits) ? digits : '';
}
function luhn(number) {
    if (!/^\d{12,19}$/.test(number))
        return false;
    let sum = 0;
    for (let i = 0; i < number.length; i++) {
        let d = number.charCodeAt(number.length - 1 - i) - 48;
        if (i % 2 === 1 && (d *= 2) > 9)
            d -= 9;
        sum += d;
    }
    return sum % 10 === 0;
}
function detectBrand(number) {
    if (/^4/.test(number))
        return 'visa';
    if (/^3[47]/.test(number))
        return 'amex';
    if (/^(6011|65)/.test(number))
        return 'discover';
    const two = Number(number.slice(0, 2));
    const four = number.length >= 4 ? Number(number.slice(0, 4)) : 0;
    if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720))
        return 'mastercard';
    return 'unknown';
}
function cvcLength(brand) {
    return brand === 'amex' ? 4 : 3;
}
function groupDigits(number) {
    const sizes = detectBrand(number) === 'amex' ? [4, 6, 5] : [4, 4, 4, 4, 3];
    const parts = [];
    let at = 0;
    for (const size of sizes)
        if (at < number.length)
            parts.push(number.slice(at, (at += size)));
    return parts.join(' ');
}
function numberState(value, final) {
    const number = cardDigits(value);
    if (!value.trim())
        return { empty: true, complete: false, error: '' };
    if (!number)
        return { empty: false, complete: false, error: 'card_number_invalid' };
    const lengths = LENGTHS[detectBrand(number)];
    const max = Math.max(...lengths);
    if (number.length > max)
        return { empty: false, complete: false, error: 'card_number_invalid' };
    if (lengths.includes(number.length) && luhn(number))
        return { empty: false, complete: true, error: '' };
    if (number.length === max)
        return { empty: false, complete: false, error: 'card_number_invalid' };
    return { empty: false, complete: false, error: final ? 'card_number_incomplete' : '' };
}
function parseExpiry(value) {
    const m = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(value);
    if (!m)
        return null;
    const month = Number(m[1]);
    const year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
    return month >= 1 && month <= 12 ? { month, year } : null;
}
function expiryState(value, now, final) {
    if (!value.trim())
        return { empty: true, complete: false, error: '' };
    const exp = parseExpiry(value);
    if (!exp) {
        const partial = /^\s*(0|0?[1-9]|1[0-2])\s*(\/\s*\d{0,3}\s*)?$/.test(value) || /^\s*(0[1-9]|1[0-2])\d\s*$/.test(value);
        return { empty: false, complete: false, error: partial && !final ? '' : partial ? 'card_expiry_incomplete' : 'card_expiry_invalid' };
    }
    if (exp.year > now.getFullYear() + 25)
        return { empty: false, complete: false, error: 'card_expiry_invalid' };
    if (exp.year * 12 + exp.month < now.getFullYear() * 12 + now.getMonth() + 1)
        return { empty: false, complete: false, error: 'card_expiry_past' };
    return { empty: false, complete: true, error: '' };
}
function cvcState(value, brand, final) {
    const cvc = value.trim();
    if (!cvc)
        return { empty: true, complete: false, error: '' };
    const length = cvcLength(brand);
    if (!/^\d+$/.test(cvc) || cvc.length > length)
        return { empty: false, complete: false, error: 'card_cvc_invalid' };
    if (cvc.length === length)
        return { empty: false, complete: true, error: '' };
    return { empty: false, complete: false, error: final ? 'card_cvc_incomplete' : '' };
}

// style.ts
const FONT_FAMILIES = {
    'system-ui': 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    'sans-serif': 'sans-serif',
    serif: 'serif',
    monospace: 'ui-monospace, Menlo, Consolas, monospace',
    Arial: 'Arial, Helvetica, sans-serif',
    Helvetica: 'Helvetica, Arial, sans-serif',
    Georgia: 'Georgia, serif',
    Verdana: 'Verdana, sans-serif',
    'Times New Roman': '"Times New Roman", Times, serif',
    'Courier New': '"Courier New", Courier, monospace',
};
const BYTE = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const ALPHA = '(0|1|0?\\.\\d{1,3}|1\\.0{1,3})';
const COLOR = new RegExp(`^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|#[0-9a-fA-F]{8}|rgb\\(${BYTE}, ?${BYTE}, ?${BYTE}\\)|rgba\\(${BYTE}, ?${BYTE}, ?${BYTE}, ?${ALPHA}\\))$`);
function inRange(value, pattern, ranges) {
    const m = pattern.exec(value);
    if (!m)
        return false;
    const range = ranges[m[2]];
    const n = Number(m[1]);
    return range !== undefined && n >= range[0] && n <= range[1];
}
const LENGTH = /^(-?\d{1,2}(?:\.\d{1,2})?)(px|rem|em)$/;
const CHECKS = {
    color: (v) => COLOR.test(v),
    backgroundColor: (v) => COLOR.test(v),
    placeholderColor: (v) => COLOR.test(v),
    invalidColor: (v) => COLOR.test(v),
    fontSize: (v) => inRange(v, LENGTH, { px: [8, 40], rem: [0.5, 2.5], em: [0.5, 2.5] }),
    fontFamily: (v) => Object.hasOwn(FONT_FAMILIES, v),
    fontWeight: (v) => /^(normal|bold|[1-9]00)$/.test(v),
    letterSpacing: (v) => v === 'normal' || inRange(v, LENGTH, { px: [-2, 10], em: [-0.2, 0.5] }),
};
const STYLE_VARIABLES = {
    color: '--cf-color',
    backgroundColor: '--cf-background',
    fontSize: '--cf-font-size',
    fontFamily: '--cf-font-family',
    fontWeight: '--cf-font-weight',
    letterSpacing: '--cf-letter-spacing',
    placeholderColor: '--cf-placeholder',
    invalidColor: '--cf-invalid',
};
class FieldStyleError extends Error {
    constructor(message) {
        super(message);
        this.name = 'FieldStyleError';
    }
}
function checkStyle(style) {
    if (style === undefined || style === null)
        return {};
    if (typeof style !== 'object' || Array.isArray(style))
        throw new FieldStyleError('style must be an object of whitelisted properties, e.g. { color: "#1a1a1a", fontSize: "16px" }.');
    const out = {};
    for (const [key, value] of Object.entries(style)) {
        if (!Object.hasOwn(CHECKS, key))
            throw new FieldStyleError(`style.${key} is not supported; the fields take only ${Object.keys(CHECKS).join(', ')}.`);
        if (typeof value !== 'string' || value.length > 64 || !CHECKS[key](value)) {
            const hint = key === 'fontFamily' ? `one of ${Object.keys(FONT_FAMILIES).join(', ')}` : key.endsWith('olor') ? 'a colour as #rrggbb or rgb(r, g, b)' : 'a value in the documented range';
            throw new FieldStyleError(`style.${key} must be ${hint}; got ${JSON.stringify(value).slice(0, 70)}.`);
        }
        out[key] = value;
    }
    return out;
}
function styleVariables(style) {
    const vars = [];
    for (const [key, value] of Object.entries(style)) {
        vars.push([STYLE_VARIABLES[key], key === 'fontFamily' ? FONT_FAMILIES[value] : value]);
    }
    return vars;
}

// protocol.ts
const TAG = 'checkout-fields/1';
const FIELD_KINDS = ['cardNumber', 'cardExpiry', 'cardCvc'];
const FRAME_PATHS = {
    cardNumber: '/fields/card-number',
    cardExpiry: '/fields/card-expiry',
    cardCvc: '/fields/card-cvc',
    challenge: '/fields/challenge',
};
const PUBLISHABLE_KEY = /^pk_(test|live)_[A-Za-z0-9]{8,128}$/;
const CLIENT_SECRET = /^ord_[A-Za-z0-9]{8,64}_secret_[A-Za-z0-9_-]{16,128}$/;
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v, max) => typeof v === 'string' && v.length <= max;
const isBool = (v) => typeof v === 'boolean';
const isCount = (v, max) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;
const isCode = (v) => typeof v === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(v);
function tagged(message) {
    return { tag: TAG, ...message };
}
function checkResult(v) {
    if (!isObject(v))
        return null;
    if (v.status === 'paid' && isText(v.orderId, 80))
        return { status: 'paid', orderId: v.orderId };
    if (v.status === 'declined' && isCode(v.code) && isText(v.message, 300) && isCount(v.attemptsRemaining, 1000))
        return { status: 'declined', code: v.code, message: v.message, attemptsRemaining: v.attemptsRemaining };
    if (v.status === 'failed' && isCode(v.code) && isText(v.message, 300))
        return { status: 'failed', code: v.code, message: v.message };
    return null;
}
function parseFrameMessage(data) {
    if (!isObject(data) || data.tag !== TAG)
        return null;
    switch (data.type) {
        case 'loaded':
        case 'focus':
        case 'blur':
        case 'challenge':
            return { type: data.type };
        case 'ready':
            return isCount(data.height, 2000) ? { type: 'ready', height: data.height } : null;
        case 'change': {
            const { empty, complete, brand, error } = data;
            if (!isBool(empty) || !isBool(complete) || !BRANDS.includes(brand))
                return null;
            if (error !== '' && !FIELD_ERROR_CODES.includes(error))
                return null;
            return { type: 'change', empty, complete, brand: brand, error: error };
        }
        case 'result': {
            const result = checkResult(data.result);
            return result && isCount(data.id, Number.MAX_SAFE_INTEGER) ? { type: 'result', id: data.id, result } : null;
        }
        default:
            return null;
    }
}
function parseParentMessage(data) {
    if (!isObject(data) || data.tag !== TAG)
        return null;
    switch (data.type) {
        case 'init': {
            if (!isText(data.label, 100) || !isText(data.placeholder, 40))
                return null;
            let style;
            try {
                style = checkStyle(data.style);
            }
            catch {
                return null;
            }
            const init = { type: 'init', label: data.label, placeholder: data.placeholder, style };
            if (data.publishableKey === undefined && data.clientSecret === undefined)
                return init;
            if (!isText(data.publishableKey, 200) || !PUBLISHABLE_KEY.test(data.publishableKey) || !isText(data.clientSecret, 300) || !CLIENT_SECRET.test(data.clientSecret))
                return null;
            return { ...init, publishableKey: data.publishableKey, clientSecret: data.clientSecret };
        }
        case 'confirm':
            return isCount(data.id, Number.MAX_SAFE_INTEGER) && isText(data.name, 200) ? { type: 'confirm', id: data.id, name: data.name } : null;
        case 'focus':
        case 'clear':
            return { type: data.type };
        default:
            return null;
    }
}
function parseChannelMessage(data) {
    if (!isObject(data) || data.tag !== TAG)
        return null;
    switch (data.type) {
        case 'collect':
            return isText(data.nonce, 64) ? { type: 'collect', nonce: data.nonce } : null;
        case 'value':
            return isText(data.nonce, 64) && (data.field === 'cardExpiry' || data.field === 'cardCvc') && isText(data.value, 32) ? { type: 'value', nonce: data.nonce, field: data.field, value: data.value } : null;
        case 'brand':
            return BRANDS.includes(data.brand) ? { type: 'brand', brand: data.brand } : null;
        case 'invalid':
            return FIELD_KINDS.includes(data.field) && FIELD_ERROR_CODES.includes(data.error) ? { type: 'invalid', field: data.field, error: data.error } : null;
        case 'challenge-info':
            return isText(data.hint, 300) && isText(data.testCode, 32) && isBool(data.retry) ? { type: 'challenge-info', hint: data.hint, testCode: data.testCode, retry: data.retry } : null;
        case 'challenge-answer':
            return isText(data.code, 32) ? { type: 'challenge-answer', code: data.code } : null;
        case 'challenge-ready':
        case 'challenge-abandon':
            return { type: data.type };
        default:
            return null;
    }
}
function checkEmbedderOrigin(value) {
    if (typeof value !== 'string' || value.length > 255)
        return null;
    let url;
    try {
        url = new URL(value);
    }
    catch {
        return null;
    }
    if (url.origin !== value)
        return null;
    if (url.protocol === 'https:')
        return value;
    const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname);
    return url.protocol === 'http:' && loopback ? value : null;
}

// fields.ts
const DEFAULT_LABELS = { cardNumber: 'Card number', cardExpiry: 'Expiry date (MM / YY)', cardCvc: 'Security code (CVC)' };
const DEFAULT_PLACEHOLDERS = { cardNumber: '1234 1234 1234 1234', cardExpiry: 'MM / YY', cardCvc: 'CVC' };
const ERROR_TEXT = {
    card_number_incomplete: 'Your card number is incomplete.',
    card_number_invalid: 'Your card number is invalid.',
    card_expiry_incomplete: 'Your card\'s expiry date is incomplete.',
    card_expiry_invalid: 'Your card\'s expiry date is invalid.',
    card_expiry_past: 'Your card\'s expiry date is in the past.',
    card_cvc_incomplete: 'Your card\'s security code is incomplete.',
    card_cvc_invalid: 'Your card\'s security code is invalid.',
};
const current = typeof document !== 'undefined' ? document.currentScript : null;
const SCRIPT_ORIGIN = current?.src ? new URL(current.src).origin : '';
function randomHex(bytes) {
    return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}
function CheckoutFields(options) {
    if (!PUBLISHABLE_KEY.test(String(options?.publishableKey)))
        throw new TypeError('CheckoutFields: publishableKey must be your publishable key (pk_test_… or pk_live_…), never a secret key.');
    if (!CLIENT_SECRET.test(String(options.clientSecret)))
        throw new TypeError('CheckoutFields: clientSecret must be the order\'s client_secret (ord_…_secret_…) from your server.');
    const host = checkEmbedderOrigin(String(options.checkoutHost ?? SCRIPT_ORIGIN).replace(/\/$/, ''));
    if (!host)
        throw new TypeError('CheckoutFields: checkoutHost must be an https origin (http on localhost), e.g. https://pay.example.com.');
    const baseStyle = checkStyle(options.style);
    const channel = randomHex(16);
    const frames = new Map();
    const fields = new Map();
    let overlay = null;
    let pending = null;
    let nextId = 1;
    const frameUrl = (path) => `${host}${path}?origin=${encodeURIComponent(location.origin)}#${channel}`;
    class Field {
        constructor(kind, o) {
            Object.defineProperty(this, "kind", {
                enumerable: true,
                configurable: true,
                writable: true,
                value: void 0
            });
            Object.defineProperty(this, "label", {
                enumerable: true,
                configurable: true,
                writable: true,
                value: void 0
            });
            Object.defineProperty(this, "placeholder", {
                enumerable: true,
                configurable: true,
                writable: true,
                value: void 0
            });
            Object.defineProperty(this, "style", {
                enumerable: true,
                configurable: true,
                writable: true,
                value: void 0
            });
            Object.defineProperty(this, "handlers", {
                enumerable: true,
                configurable: true,
                writable: true,
                value: new Map()
            });
            Object.defineProperty(this, "frame", {
                enumerable: true,
                configurable: true,
                writable: true,
                value: null
            });
            Object.defineProperty(this, "ready", {
                enumerable: true,
                configurable: true,
                writable: true,
                value: false
            });
            Object.defineProperty(this, "loadTimer", {
                enumerable: true,
                configurable: true,
                writable: true,
                value: void 0
            });
            this.kind = kind;
            this.label = typeof o.ariaLabel === 'string' && o.ariaLabel.trim() ? o.ariaLabel.trim().slice(0, 100) : DEFAULT_LABELS[kind];
            this.placeholder = typeof o.placeholder === 'string' ? o.placeholder.slice(0, 40) : DEFAULT_PLACEHOLDERS[kind];
            this.style = { ...baseStyle, ...checkStyle(o.style) };
        }
        mount(target) {
            const parent = typeof target === 'string' ? document.querySelector(target) : target;
            if (!parent)
                throw new TypeError(`CheckoutFields: nothing matches ${String(target)} to mount the ${this.kind} field in.`);
            if (this.frame)
                throw new TypeError(`CheckoutFields: the ${this.kind} field is already mounted.`);
            const frame = document.createElement('iframe');
            frame.src = frameUrl(FRAME_PATHS[this.kind]);
            frame.title = this.label;
            frame.setAttribute('frameborder', '0');
            frame.setAttribute('scrolling', 'no');
            frame.setAttribute('allowtransparency', 'true');
            frame.style.cssText = 'border:0;width:100%;height:44px;display:block;background:transparent;overflow:hidden';
            parent.appendChild(frame);
            this.frame = frame;
            frames.set(frame.contentWindow, this);
            this.loadTimer = setTimeout(() => {
                if (!this.ready)
                    this.emit('error', { code: 'frame_unavailable', message: `The ${this.kind} field did not load from ${host}.` });
            }, 20000);
            return this;
        }
        on(event, handler) {
            if (!this.handlers.has(event))
                this.handlers.set(event, new Set());
            this.handlers.get(event).add(handler);
            return this;
        }
        off(event, handler) {
            this.handlers.get(event)?.delete(handler);
            return this;
        }
        emit(event, payload) {
            for (const handler of this.handlers.get(event) ?? [])
                handler(payload);
        }
        post(message) {
            this.frame?.contentWindow?.postMessage(tagged(message), host);
        }
        focus() {
            this.post({ type: 'focus' });
        }
        clear() {
            this.post({ type: 'clear' });
        }
        unmount() {
            if (!this.frame)
                return;
            clearTimeout(this.loadTimer);
            for (const [w, f] of frames)
                if (f === this)
                    frames.delete(w);
            this.frame.remove();
            this.frame = null;
            this.ready = false;
        }
    }
    const closeOverlay = () => {
        if (!overlay)
            return;
        overlay.root.remove();
        const back = overlay.returnFocus;
        overlay = null;
        if (back instanceof HTMLElement)
            back.focus();
    };
    const openOverlay = () => {
        if (overlay)
            return;
        const root = document.createElement('div');
        root.setAttribute('role', 'dialog');
        root.setAttribute('aria-modal', 'true');
        root.setAttribute('aria-label', 'Confirm your payment with your bank');
        root.style.cssText = 'position:fixed;inset:0;z-index:2147483647;background:rgba(0,0,0,0.55);display:flex;align-items:center;justify-content:center';
        const frame = document.createElement('iframe');
        frame.src = frameUrl(FRAME_PATHS.challenge);
        frame.title = 'Payment authentication by your bank';
        frame.style.cssText = 'border:0;border-radius:8px;background:#fff;width:min(420px,calc(100vw - 32px));height:min(440px,calc(100vh - 32px))';
        root.appendChild(frame);
        document.body.appendChild(root);
        overlay = { root, frame, returnFocus: document.activeElement };
        frame.addEventListener('load', () => frame.focus());
    };
    window.addEventListener('message', (e) => {
        if (e.origin !== host)
            return;
        const field = e.source ? frames.get(e.source) : undefined;
        if (!field)
            return;
        const m = parseFrameMessage(e.data);
        if (!m)
            return;
        switch (m.type) {
            case 'loaded': {
                const credentials = field.kind === 'cardNumber' ? { publishableKey: options.publishableKey, clientSecret: options.clientSecret } : {};
                field.post({ type: 'init', label: field.label, placeholder: field.placeholder, style: field.style, ...credentials });
                return;
            }
            case 'ready':
                clearTimeout(field.loadTimer);
                if (field.frame && m.height > 0)
                    field.frame.style.height = `${m.height}px`;
                if (!field.ready) {
                    field.ready = true;
                    field.emit('ready');
                }
                return;
            case 'change': {
                const change = { elementType: field.kind, empty: m.empty, complete: m.complete, brand: m.brand, ...(m.error ? { error: { code: m.error, message: ERROR_TEXT[m.error] } } : {}) };
                field.emit('change', change);
                return;
            }
            case 'focus':
            case 'blur':
                field.emit(m.type);
                return;
            case 'challenge':
                if (field.kind === 'cardNumber' && pending)
                    openOverlay();
                return;
            case 'result':
                if (field.kind !== 'cardNumber' || !pending || pending.id !== m.id)
                    return;
                clearTimeout(pending.timer);
                closeOverlay();
                pending.resolve(m.result);
                pending = null;
                return;
        }
    });
    return {
        create(kind, o = {}) {
            if (!FIELD_KINDS.includes(kind))
                throw new TypeError(`CheckoutFields: create() takes ${FIELD_KINDS.join(', ')}; got ${String(kind)}.`);
            if (fields.has(kind))
                throw new TypeError(`CheckoutFields: a ${kind} field already exists.`);
            const field = new Field(kind, o);
            fields.set(kind, field);
            return field;
        },
        confirm({ name } = { name: '' }) {
            const number = fields.get('cardNumber');
            if (!number?.ready)
                return Promise.resolve({ status: 'failed', code: 'fields_not_ready', message: 'Mount the card fields and wait for their ready event before confirming.' });
            if (pending)
                return Promise.resolve({ status: 'failed', code: 'confirm_in_progress', message: 'A payment is already being confirmed.' });
            if (typeof name !== 'string' || !name.trim())
                return Promise.resolve({ status: 'failed', code: 'card_name_invalid', message: 'Pass the name on the card: confirm({ name }).' });
            return new Promise((resolve) => {
                const id = nextId++;
                const timer = setTimeout(() => {
                    closeOverlay();
                    pending = null;
                    resolve({ status: 'failed', code: 'timeout', message: 'No answer from the payment fields within 10 minutes.' });
                }, 600000);
                pending = { id, resolve, timer };
                number.post({ type: 'confirm', id, name: name.trim().slice(0, 100) });
            });
        },
    };
}
globalThis.CheckoutFields = CheckoutFields;
})();
