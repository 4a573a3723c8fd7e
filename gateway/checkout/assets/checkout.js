/* Hosted checkout page script: card checks, payment calls over Connect JSON,
   the 3-D Secure step, and the receipt's redirect. No framework, no third
   party. Card data is sent only in the POST body of one same-origin call,
   and never logged, stored or put in a URL. */
/* global document, location, history, fetch, crypto */
'use strict';

const BRANDS = {
  visa: { label: 'Visa', lengths: [13, 16, 19], cvc: 3 },
  mastercard: { label: 'Mastercard', lengths: [16], cvc: 3 },
  amex: { label: 'American Express', lengths: [15], cvc: 4 },
  discover: { label: 'Discover', lengths: [16, 17, 18, 19], cvc: 3 },
};

/** Card number digits, with the spaces and dashes people type removed. */
function cardDigits(value) {
  return value.replace(/[\s-]/g, '');
}

/** Whether to tell the shopper how many attempts are left: only when few are (i18n.ts, FEW_ATTEMPTS). */
function fewAttemptsLeft(left) {
  return left > 0 && left <= 3;
}

/** The Luhn checksum of a 12–19 digit number. */
function luhn(number) {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1 && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** visa, mastercard, amex, discover or '' from the leading digits. */
function detectBrand(number) {
  if (/^4/.test(number)) return 'visa';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65)/.test(number)) return 'discover';
  const two = Number(number.slice(0, 2));
  const four = number.length >= 4 ? Number(number.slice(0, 4)) : 0;
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
  return '';
}

/** The number's error key, or '' when it is a plausible card number. */
function numberError(value) {
  const number = cardDigits(value);
  if (!number) return 'numberRequired';
  const brand = BRANDS[detectBrand(number)];
  if (!luhn(number) || (brand && !brand.lengths.includes(number.length))) return 'numberInvalid';
  return '';
}

/** {month, year} of "MM/YY", "MM / YYYY" or "MMYY", or null. */
function parseExpiry(value) {
  const m = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(value);
  if (!m) return null;
  const month = Number(m[1]);
  const year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  return month >= 1 && month <= 12 ? { month, year } : null;
}

/** The expiry's error key: cards are valid to the end of their month. */
function expiryError(value, now) {
  const exp = parseExpiry(value);
  if (!exp || exp.year > now.getFullYear() + 25) return 'expiryInvalid';
  if (exp.year * 12 + exp.month < now.getFullYear() * 12 + now.getMonth() + 1) return 'expiryPast';
  return '';
}

/** Digits of the security code the brand asks for: 4 for American Express, else 3. */
function cvcLength(number) {
  const brand = BRANDS[detectBrand(cardDigits(number))];
  return brand ? brand.cvc : 3;
}

/** Groups digits as printed on the card: 4-6-5 for American Express, fours otherwise. */
function groupDigits(number) {
  const sizes = detectBrand(number) === 'amex' ? [4, 6, 5] : [4, 4, 4, 4, 3];
  const parts = [];
  let at = 0;
  for (const size of sizes) if (at < number.length) parts.push(number.slice(at, (at += size)));
  return parts.join(' ');
}

/** A v4 UUID; randomUUID needs a secure context, so plain-http development falls back to getRandomValues. */
function newId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 15) | 64;
  b[8] = (b[8] & 63) | 128;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const $ = (id) => document.getElementById(id);

function initPayment(root) {
  const msg = JSON.parse(root.dataset.messages || '{}');
  const plural = new Intl.PluralRules(document.documentElement.lang);
  const t = (key, values) => (msg[key] || msg.generic || '').replace(/\{(\w+)\}/g, (all, name) => (values && name in values ? values[name] : all));
  const form = $('card-form');
  const number = $('cc-number');
  const expiry = $('cc-exp');
  const cvc = $('cc-csc');
  const name = $('cc-name');
  const dialog = $('challenge');
  const code = $('challenge-code');
  const pending = {}; // submission id per method, kept while that submission's outcome is unknown
  // A payment link's page has no order until the first Pay: its suffix, and one start id per page load.
  const link = root.dataset.link || '';
  const startId = link ? newId() : '';
  let busy = false;
  let locked = false;
  let challenge = null; // { attemptId, status: the origin status element, focus: where focus returns }

  const setStatus = (el, text, kind) => {
    el.textContent = text;
    el.className = `status${kind ? ` ${kind}` : ''}`;
  };
  const setBusy = (on) => {
    busy = on;
    for (const b of document.querySelectorAll('[data-pay], #challenge button')) b.disabled = on || (locked && b.hasAttribute('data-pay'));
  };
  const setError = (input, text) => {
    $(`${input.id}-error`).textContent = text;
    if (text) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  };
  const checks = {
    'cc-number': () => numberError(number.value),
    'cc-exp': () => expiryError(expiry.value, new Date()),
    'cc-csc': () => (new RegExp(`^\\d{${cvcLength(number.value)}}$`).test(cvc.value.trim()) ? '' : 'cvcInvalid'),
    'cc-name': () => (name.value.trim() ? '' : 'nameRequired'),
  };
  const check = (input) => {
    const key = checks[input.id]();
    setError(input, key ? t(key, { digits: cvcLength(number.value) }) : '');
    return !key;
  };

  const FIELD_ERRORS = {
    card_number_invalid: ['cc-number', 'numberInvalid'],
    card_expiry_invalid: ['cc-exp', 'expiryInvalid'],
    card_cvc_invalid: ['cc-csc', 'cvcInvalid'],
    card_name_invalid: ['cc-name', 'nameRequired'],
  };

  /** POSTs one Connect unary call to `path`; resolves to {json} or {error, reason}. */
  async function rpc(path, body, headers) {
    let res;
    let json = null;
    try {
      res = await fetch(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1', ...headers },
        body: JSON.stringify(body),
        credentials: 'same-origin',
        cache: 'no-store',
      });
      json = await res.json();
    } catch {
      // Network failure, or a proxy's non-JSON error page.
    }
    if (res && res.ok && json) return { json };
    const detail = json && Array.isArray(json.details) ? json.details.map((d) => d.debug).find(Boolean) : null;
    const error = json && json.code ? json.code : !res || res.status >= 500 ? 'unavailable' : 'unknown';
    return { error, reason: detail && detail.code };
  }

  /** One CheckoutService call with the order's token; resolves to {outcome} or {error, reason}. */
  async function call(method, body) {
    const result = await rpc(`/checkout.v1.CheckoutService/${method}`, body, { 'checkout-token': root.dataset.token });
    if (result.json && result.json.outcome) return { outcome: result.json.outcome };
    return result.json ? { error: 'unknown' } : result;
  }

  /**
   * On a payment link's page, the customer's first Pay creates their order (StartPayment; a repeat
   * with this page's start id answers the same order). From then on the page is that order's
   * checkout: its id and token, and its address, so that a reload shows the order. Resolves to {} or
   * {error, reason}.
   */
  async function startOrder() {
    if (!link || root.dataset.checkoutId) return {};
    const result = await rpc('/checkout.v1.PaymentLinkPageService/StartPayment', { suffix: link, startId }, {});
    if (!result.json) return result;
    if (!result.json.checkoutId || !result.json.checkoutToken) return { error: 'unknown' };
    root.dataset.checkoutId = result.json.checkoutId;
    root.dataset.token = result.json.checkoutToken;
    history.replaceState(null, '', `/c/${encodeURIComponent(result.json.checkoutId)}`);
    return {};
  }

  function closeChallenge() {
    if (dialog && dialog.open) dialog.close();
    const focus = challenge && challenge.focus;
    challenge = null;
    return focus;
  }

  /** Shows a Connect error of a payment call; `statusEl` is where its message goes. */
  function handleError(result, method, statusEl) {
    const { error, reason } = result;
    const retryable = ['unavailable', 'deadline_exceeded', 'internal', 'unknown', 'aborted'].includes(error);
    if (!retryable) delete pending[method]; // only an unanswered submission is repeated with the same id
    if (reason === 'payment_link_used' || reason === 'payment_link_inactive') {
      // The order's payment link takes no payment from this customer; nothing was charged, and retrying will not help.
      locked = true;
      setBusy(false);
      setStatus(statusEl, t(reason === 'payment_link_used' ? 'linkUsed' : 'linkInactive'), 'error');
      return;
    }
    if (error === 'failed_precondition') {
      // Paid or expired meanwhile (or the method was switched off): the server renders the current state.
      setStatus(statusEl, t('stale'));
      location.reload();
      return;
    }
    if (reason === 'payment_link_busy') {
      // Too many orders started on the link (or from this network): it passes, so the form stays usable.
      setBusy(false);
      setStatus(statusEl, t('linkBusy'), 'error');
      return;
    }
    if (reason === 'too_many_payment_attempts') {
      // Card-testing limits: they pass after a while, so the form stays usable.
      setBusy(false);
      setStatus(statusEl, t('velocityLimited'), 'error');
      return;
    }
    if (error === 'resource_exhausted') locked = true;
    setBusy(false);
    const field = FIELD_ERRORS[reason];
    if (field && $(field[0])) {
      const input = $(field[0]);
      setError(input, t(field[1], { digits: cvcLength(number.value) }));
      setStatus(statusEl, t('fixErrors'), 'error');
      input.focus();
      return;
    }
    const key = locked ? 'attemptsExhausted' : error === 'aborted' ? 'inProgress' : retryable ? 'network' : 'generic';
    setStatus(statusEl, t(key), 'error');
  }

  /** Sends the page to a challenge's redirect: a navigation (GET), or a form of its fields submitted (POST). */
  function followRedirect(ch) {
    if ((ch.redirectMethod || 'GET').toUpperCase() !== 'POST') {
      location.assign(ch.redirectUrl);
      return;
    }
    const form = document.createElement('form');
    form.method = 'post';
    form.action = ch.redirectUrl;
    for (const [name, value] of Object.entries(ch.redirectFields || {})) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.appendChild(input);
    }
    document.body.appendChild(form);
    form.submit();
  }

  /** Shows a payment outcome: receipt on success, the issuer's challenge (a redirect, or the in-page dialog), or the decline. */
  function handleOutcome(outcome, statusEl, focusEl, abandoned) {
    if (outcome.status === 'PAYMENT_STATUS_SUCCEEDED') {
      setStatus(challenge ? $('challenge-status') : statusEl, t('succeeded'), 'ok');
      location.reload();
      return;
    }
    if (outcome.status === 'PAYMENT_STATUS_REQUIRES_AUTHENTICATION' && outcome.challenge && outcome.challenge.redirectUrl) {
      // 3-D Secure by redirect: the whole page goes to the issuer, which sends the customer back to the return leg.
      setStatus(statusEl, t('processing'));
      followRedirect(outcome.challenge);
      return;
    }
    if (outcome.status === 'PAYMENT_STATUS_REQUIRES_AUTHENTICATION' && outcome.challenge && dialog) {
      const again = Boolean(challenge);
      challenge = challenge || { status: statusEl, focus: focusEl };
      challenge.attemptId = outcome.challenge.attemptId;
      const testCode = outcome.challenge.testCode;
      $('challenge-hint').textContent = testCode ? t('challengeTestHint', { code: testCode }) : outcome.challenge.hint || '';
      setStatus($('challenge-status'), again ? t('codeWrong') : '', again ? 'error' : '');
      code.value = '';
      setBusy(false);
      if (!dialog.open) dialog.showModal();
      code.focus();
      return;
    }
    if (outcome.status !== 'PAYMENT_STATUS_FAILED') {
      setBusy(false);
      setStatus(statusEl, t('generic'), 'error');
      return;
    }
    const origin = closeChallenge() || focusEl;
    const checkout = outcome.checkout;
    // proto3 JSON leaves zero out: a checkout without attemptsRemaining has none left.
    const left = checkout ? checkout.attemptsRemaining || 0 : -1;
    if (left === 0) locked = true;
    setBusy(false);
    const text = abandoned ? t('authenticationCancelled') : (msg.decline && msg.decline[outcome.declineCode]) || outcome.message || t('declined');
    const tail = fewAttemptsLeft(left) ? ` ${t(plural.select(left) === 'one' ? 'attemptsOne' : 'attemptsOther', { count: left })}` : '';
    setStatus(statusEl, locked ? `${text} ${t('attemptsExhausted')}` : text + tail, 'error');
    if (origin === number) {
      number.value = '';
      cvc.value = '';
      $('cc-brand').textContent = '';
    }
    if (origin && !origin.disabled) origin.focus();
  }

  // `key` names the submission kept for a retry (one per saved card; the method's name otherwise).
  async function pay(method, body, statusEl, focusEl, key = method) {
    if (busy || locked) return;
    setBusy(true);
    setStatus(statusEl, t('processing'));
    if (link && !root.dataset.checkoutId) {
      const started = await startOrder();
      if (started.error) return handleError(started, key, statusEl);
    }
    pending[key] = pending[key] || newId();
    const result = await call(method, { checkoutId: root.dataset.checkoutId, submissionId: pending[key], ...body });
    if (result.error) return handleError(result, key, statusEl);
    delete pending[key];
    handleOutcome(result.outcome, statusEl, focusEl, false);
  }

  if (form) {
    form.addEventListener('input', (e) => {
      delete pending.SubmitCardPayment; // changed details make a new submission
      if (e.target === number) {
        const brand = BRANDS[detectBrand(cardDigits(number.value))];
        $('cc-brand').textContent = brand ? brand.label : '';
        cvc.maxLength = brand ? brand.cvc : 4;
      }
      if (e.target.getAttribute('aria-invalid')) check(e.target);
    });
    form.addEventListener('focusout', (e) => {
      const input = e.target;
      if (!checks[input.id] || !input.value.trim()) return;
      if (input === number && /^\d+$/.test(cardDigits(number.value))) number.value = groupDigits(cardDigits(number.value));
      const exp = input === expiry && parseExpiry(expiry.value);
      if (exp) expiry.value = `${String(exp.month).padStart(2, '0')}/${String(exp.year % 100).padStart(2, '0')}`;
      check(input);
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      if (busy || locked) return;
      const status = $('card-status');
      const invalid = [number, expiry, cvc, name].filter((input) => !check(input));
      if (invalid.length) {
        setStatus(status, t('fixErrors'), 'error');
        invalid[0].focus();
        return;
      }
      const exp = parseExpiry(expiry.value);
      const card = { number: cardDigits(number.value), expMonth: exp.month, expYear: exp.year, cvc: cvc.value.trim(), name: name.value.trim() };
      const save = $('cc-save');
      pay('SubmitCardPayment', save && save.checked ? { card, saveCard: true } : { card }, status, number);
    });
  }

  for (const button of document.querySelectorAll('[data-saved-card]')) {
    const cardId = button.getAttribute('data-saved-card');
    button.addEventListener('click', () => pay('SubmitSavedCardPayment', { cardId }, $('saved-status'), button, `saved:${cardId}`));
  }

  const wallet = $('wallet-pay');
  if (wallet) wallet.addEventListener('click', () => pay('SubmitWalletPayment', {}, $('wallet-status'), wallet));

  // A payment link's bank transfer: the order (and its account and reference) exists once started.
  const bankStart = $('bank-start');
  if (bankStart) {
    bankStart.addEventListener('click', async () => {
      if (busy || locked) return;
      const status = $('bank-status');
      setBusy(true);
      setStatus(status, '');
      const started = await startOrder();
      if (started.error) return handleError(started, 'StartPayment', status);
      location.reload();
    });
  }

  async function authenticate(body, abandoned) {
    if (busy || !challenge) return;
    setBusy(true);
    setStatus($('challenge-status'), t('processing'));
    const result = await call('CompleteAuthentication', { checkoutId: root.dataset.checkoutId, attemptId: challenge.attemptId, ...body });
    if (!result.error) return handleOutcome(result.outcome, challenge.status, challenge.focus, abandoned);
    if (['unavailable', 'deadline_exceeded', 'internal', 'unknown', 'aborted'].includes(result.error)) {
      setBusy(false);
      if (!dialog.open) dialog.showModal();
      setStatus($('challenge-status'), t('network'), 'error');
      return;
    }
    // The attempt is gone or the order changed: leave the issuer's step and report on the form.
    const { status } = challenge;
    closeChallenge();
    handleError(result, 'CompleteAuthentication', status);
  }

  if (dialog) {
    $('challenge-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const ok = code.value.trim() !== '';
      setError(code, ok ? '' : t('codeRequired'));
      if (ok) authenticate({ code: code.value.trim() }, false);
      else code.focus();
    });
    $('challenge-cancel').addEventListener('click', () => authenticate({ abandon: true }, true));
    // Escape means Cancel: the attempt is abandoned on the server, not left hanging.
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      authenticate({ abandon: true }, true);
    });
    // A browser may close the dialog anyway (a second Escape): abandon then too.
    dialog.addEventListener('close', () => authenticate({ abandon: true }, true));
  }

  setBusy(false);
}

function initReceipt() {
  const link = $('return-link');
  const note = $('redirect-status');
  const stay = $('stay');
  if (!link || !note || !stay) return;
  const timer = setTimeout(() => location.assign(link.href), Number(link.dataset.redirect) * 1000);
  note.textContent = note.dataset.text;
  stay.hidden = false;
  stay.addEventListener('click', () => {
    clearTimeout(timer);
    note.textContent = '';
    stay.hidden = true;
    link.focus();
  });
}

/** Shows times in the customer's own time zone (the server renders UTC). */
function localTimes() {
  const format = new Intl.DateTimeFormat(document.documentElement.lang, { dateStyle: 'long', timeStyle: 'short' });
  for (const el of document.querySelectorAll('time[data-local]')) el.textContent = format.format(new Date(el.dateTime));
}

function init() {
  localTimes();
  const root = $('checkout');
  if (root && (root.dataset.token || root.dataset.link)) initPayment(root);
  if ($('receipt')) initReceipt();
}

if (typeof document !== 'undefined' && document.getElementById) init();
