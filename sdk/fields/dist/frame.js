// Built from sdk/fields/frame.ts by `npm run build:fields`; do not edit.
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

// frame.ts
const ERROR_TEXT = {
    card_number_incomplete: 'The card number is incomplete.',
    card_number_invalid: 'The card number is invalid.',
    card_expiry_incomplete: 'The expiry date is incomplete.',
    card_expiry_invalid: 'The expiry date is invalid.',
    card_expiry_past: 'The card has expired.',
    card_cvc_incomplete: 'The security code is incomplete.',
    card_cvc_invalid: 'The security code is invalid.',
};
const $ = (id) => document.getElementById(id);
function randomHex(bytes) {
    return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function call(method, body, publishableKey, clientSecret) {
    for (let attempt = 0;; attempt++) {
        let res;
        try {
            res = await fetch(`/checkout.v1.CheckoutService/${method}`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', authorization: `Bearer ${publishableKey}`, 'checkout-client-secret': clientSecret },
                body: JSON.stringify(body),
                credentials: 'omit',
                cache: 'no-store',
            });
        }
        catch {
            if (attempt >= 2)
                return { code: 'unavailable', message: 'The payment service could not be reached.' };
            await sleep(300 * 2 ** attempt);
            continue;
        }
        const json = (await res.json().catch(() => null));
        if (res.ok && json && typeof json.outcome === 'object')
            return { outcome: json.outcome };
        const reason = Array.isArray(json?.details) ? json.details.map((d) => d.debug?.code).find((c) => typeof c === 'string') : undefined;
        return {
            code: typeof json?.code === 'string' ? json.code : res.status >= 500 ? 'unavailable' : 'unknown',
            ...(typeof reason === 'string' ? { reason } : {}),
            message: typeof json?.message === 'string' ? json.message.slice(0, 300) : 'The payment service refused the payment.',
        };
    }
}
function start() {
    const kind = document.body.dataset.field;
    const origin = checkEmbedderOrigin(new URLSearchParams(location.search).get('origin'));
    const channelName = /^#([0-9a-f]{32})$/.exec(location.hash)?.[1];
    const ancestors = location.ancestorOrigins;
    if (!kind || !origin || !channelName || window.parent === window || (ancestors && ancestors[0] !== origin))
        return;
    const channel = new BroadcastChannel(`checkout-fields:${channelName}`);
    const toPage = (message) => window.parent.postMessage(tagged(message), origin);
    const toFrames = (message) => channel.postMessage(tagged(message));
    const listeners = [];
    channel.onmessage = (e) => {
        const m = parseChannelMessage(e.data);
        if (m)
            for (const l of listeners)
                l(m);
    };
    if (kind === 'challenge')
        startChallenge(toFrames, listeners);
    else
        startField(kind, origin, toPage, toFrames, listeners);
}
function startChallenge(toFrames, listeners) {
    const form = $('cf');
    const code = $('c');
    const hint = $('h');
    const status = $('s');
    let busy = false;
    listeners.push((m) => {
        if (m.type !== 'challenge-info')
            return;
        busy = false;
        hint.textContent = m.testCode ? `Test mode: enter ${m.testCode} to pass, anything else to fail.` : m.hint;
        status.textContent = m.retry ? 'That code was not accepted. Try again.' : '';
        code.value = '';
        code.focus();
    });
    form.addEventListener('submit', (e) => {
        e.preventDefault();
        if (busy)
            return;
        const value = code.value.trim();
        if (!value) {
            status.textContent = 'Enter the code.';
            code.focus();
            return;
        }
        busy = true;
        status.textContent = 'Checking…';
        toFrames({ type: 'challenge-answer', code: value });
    });
    const abandon = () => {
        if (busy)
            return;
        busy = true;
        toFrames({ type: 'challenge-abandon' });
    };
    $('x').addEventListener('click', abandon);
    document.addEventListener('keydown', (e) => {
        if (e.key === 'Escape')
            abandon();
    });
    toFrames({ type: 'challenge-ready' });
}
function startField(kind, origin, toPage, toFrames, listeners) {
    const input = $('f');
    const label = $('l');
    const errorText = $('e');
    let init = null;
    let brand = 'unknown';
    let last = '';
    const state = (final) => kind === 'cardNumber' ? numberState(input.value, final) : kind === 'cardExpiry' ? expiryState(input.value, new Date(), final) : cvcState(input.value, brand, final);
    const show = (error) => {
        errorText.textContent = error ? ERROR_TEXT[error] : '';
        input.classList.toggle('invalid', Boolean(error));
        if (error)
            input.setAttribute('aria-invalid', 'true');
        else
            input.removeAttribute('aria-invalid');
    };
    const report = (final) => {
        const s = state(final);
        show(s.error);
        const message = { type: 'change', empty: s.empty, complete: s.complete, brand, error: s.error };
        const key = JSON.stringify(message);
        if (key !== last)
            toPage(message);
        last = key;
    };
    input.addEventListener('input', () => {
        if (kind === 'cardNumber') {
            const next = detectBrand(cardDigits(input.value));
            if (next !== brand)
                toFrames({ type: 'brand', brand: next });
            brand = next;
        }
        report(false);
    });
    input.addEventListener('focus', () => toPage({ type: 'focus' }));
    input.addEventListener('blur', () => {
        if (kind === 'cardNumber' && numberState(input.value, true).complete)
            input.value = groupDigits(cardDigits(input.value));
        const exp = kind === 'cardExpiry' && parseExpiry(input.value);
        if (exp)
            input.value = `${String(exp.month).padStart(2, '0')} / ${String(exp.year % 100).padStart(2, '0')}`;
        if (input.value.trim())
            report(true);
        toPage({ type: 'blur' });
    });
    listeners.push((m) => {
        if (m.type === 'brand' && kind === 'cardCvc') {
            brand = m.brand;
            input.maxLength = brand === 'amex' ? 4 : 3;
            if (input.value)
                report(false);
        }
        if (m.type === 'invalid' && m.field === kind)
            show(m.error);
        if (m.type === 'collect' && kind !== 'cardNumber')
            toFrames({ type: 'value', nonce: m.nonce, field: kind, value: input.value });
    });
    const pay = kind === 'cardNumber' ? createPayer(input, () => init, () => brand, show, toPage, toFrames, listeners) : null;
    window.addEventListener('message', (e) => {
        if (e.source !== window.parent || e.origin !== origin)
            return;
        const m = parseParentMessage(e.data);
        if (!m)
            return;
        if (m.type === 'init') {
            if ((kind === 'cardNumber') !== Boolean(m.publishableKey))
                return;
            init = m;
            if (m.label) {
                label.textContent = m.label;
                document.title = m.label;
            }
            if (m.placeholder)
                input.placeholder = m.placeholder;
            for (const [name, value] of styleVariables(m.style))
                document.documentElement.style.setProperty(name, value);
            toPage({ type: 'ready', height: Math.ceil(document.documentElement.getBoundingClientRect().height) });
        }
        else if (m.type === 'focus') {
            input.focus();
        }
        else if (m.type === 'clear') {
            input.value = '';
            if (kind === 'cardNumber' && brand !== 'unknown')
                toFrames({ type: 'brand', brand: (brand = 'unknown') });
            show('');
            report(false);
        }
        else if (m.type === 'confirm' && pay) {
            void pay(m.id, m.name);
        }
    });
    toPage({ type: 'loaded' });
}
function createPayer(input, getInit, getBrand, show, toPage, toFrames, listeners) {
    let busy = false;
    let challenge = null;
    let finish = null;
    let credentials = { publishableKey: '', clientSecret: '', checkoutId: '' };
    const sendInfo = () => {
        if (challenge)
            toFrames({ type: 'challenge-info', hint: challenge.hint, testCode: challenge.testCode, retry: challenge.retry });
    };
    const settle = (answer) => {
        const o = answer.outcome;
        if (!o) {
            const fieldOf = { card_number_invalid: 'cardNumber', card_expiry_invalid: 'cardExpiry', card_cvc_invalid: 'cardCvc' };
            const field = answer.reason ? fieldOf[answer.reason] : undefined;
            if (field === 'cardNumber')
                show('card_number_invalid');
            else if (field)
                toFrames({ type: 'invalid', field, error: answer.reason });
            return finish?.({ status: 'failed', code: answer.reason ?? answer.code ?? 'unknown', message: answer.message ?? '' });
        }
        if (o.status === 'PAYMENT_STATUS_REQUIRES_AUTHENTICATION' && o.challenge?.attemptId) {
            const again = Boolean(challenge);
            challenge = { attemptId: o.challenge.attemptId, hint: o.challenge.hint ?? '', testCode: o.challenge.testCode ?? '', retry: again, answering: false };
            if (again)
                sendInfo();
            else
                toPage({ type: 'challenge' });
            return;
        }
        if (o.status === 'PAYMENT_STATUS_SUCCEEDED')
            return finish?.({ status: 'paid', orderId: o.checkout?.order?.id ?? '' });
        if (o.status === 'PAYMENT_STATUS_FAILED') {
            return finish?.({ status: 'declined', code: o.declineCode || 'declined', message: o.message || 'The card was declined.', attemptsRemaining: o.checkout?.attemptsRemaining ?? 0 });
        }
        return finish?.({ status: 'failed', code: 'unknown', message: 'The payment service answered no outcome.' });
    };
    listeners.push((m) => {
        if (!challenge)
            return;
        if (m.type === 'challenge-ready')
            sendInfo();
        if ((m.type === 'challenge-answer' || m.type === 'challenge-abandon') && !challenge.answering) {
            challenge.answering = true;
            const body = m.type === 'challenge-answer' ? { code: m.code } : { abandon: true };
            void call('CompleteAuthentication', { checkoutId: credentials.checkoutId, attemptId: challenge.attemptId, ...body }, credentials.publishableKey, credentials.clientSecret).then(settle);
        }
    });
    const collect = () => new Promise((resolve) => {
        const nonce = randomHex(16);
        const values = {};
        const listener = (m) => {
            if (m.type !== 'value' || m.nonce !== nonce)
                return;
            values[m.field] = m.value;
            if (values.cardExpiry !== undefined && values.cardCvc !== undefined)
                done();
        };
        const timer = setTimeout(() => done(), 3000);
        const done = () => {
            clearTimeout(timer);
            listeners.splice(listeners.indexOf(listener), 1);
            resolve(values);
        };
        listeners.push(listener);
        toFrames({ type: 'collect', nonce });
    });
    return async (id, name) => {
        const answer = (result) => toPage({ type: 'result', id, result });
        const init = getInit();
        if (busy)
            return answer({ status: 'failed', code: 'confirm_in_progress', message: 'A payment is already being confirmed.' });
        if (!init?.publishableKey || !init.clientSecret)
            return answer({ status: 'failed', code: 'fields_not_ready', message: 'The card fields are not ready yet.' });
        busy = true;
        const secret = init.clientSecret;
        credentials = { publishableKey: init.publishableKey, clientSecret: secret, checkoutId: secret.slice(4, secret.indexOf('_secret_')) };
        const values = await collect();
        const number = numberState(input.value, true);
        const expiry = expiryState(values.cardExpiry ?? '', new Date(), true);
        const cvc = cvcState(values.cardCvc ?? '', getBrand(), true);
        if (values.cardExpiry === undefined || values.cardCvc === undefined) {
            busy = false;
            return answer({ status: 'failed', code: 'fields_not_mounted', message: 'Mount the card number, expiry and CVC fields before confirming.' });
        }
        const wrong = [
            ['cardNumber', number, 'card_number_incomplete'],
            ['cardExpiry', expiry, 'card_expiry_incomplete'],
            ['cardCvc', cvc, 'card_cvc_incomplete'],
        ];
        const invalid = wrong.filter(([, s]) => !s.complete).map(([field, s, fallback]) => [field, s.error || fallback]);
        if (invalid.length) {
            for (const [field, error] of invalid) {
                if (field === 'cardNumber')
                    show(error);
                else
                    toFrames({ type: 'invalid', field, error });
            }
            busy = false;
            return answer({ status: 'failed', code: invalid[0][1], message: ERROR_TEXT[invalid[0][1]] });
        }
        const exp = parseExpiry(values.cardExpiry);
        const result = await new Promise((resolve) => {
            finish = resolve;
            const card = { number: cardDigits(input.value), expMonth: exp.month, expYear: exp.year, cvc: values.cardCvc.trim(), name: name.trim() };
            void call('SubmitCardPayment', { checkoutId: credentials.checkoutId, submissionId: `sub_${randomHex(16)}`, card }, credentials.publishableKey, secret).then(settle);
        });
        finish = null;
        challenge = null;
        busy = false;
        answer(result);
    };
}
start();
})();
