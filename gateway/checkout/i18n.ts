import type { DeclineCode } from '../../src/modules/payment/domain/decline-code.ts';

/** Languages the checkout pages speak. The first is the fallback. */
export const LANGUAGES = ['en', 'de'] as const;

/** A language of the message catalogue. */
export type Language = (typeof LANGUAGES)[number];

/** Strings the browser script needs, sent to it in a data attribute. `{name}` marks a placeholder. */
export interface ClientMessages {
  numberRequired: string;
  numberInvalid: string;
  expiryInvalid: string;
  expiryPast: string;
  cvcInvalid: string;
  nameRequired: string;
  codeRequired: string;
  codeWrong: string;
  fixErrors: string;
  processing: string;
  succeeded: string;
  declined: string;
  network: string;
  attemptsExhausted: string;
  stale: string;
  inProgress: string;
  generic: string;
  authenticationCancelled: string;
  attemptsOne: string;
  attemptsOther: string;
  /** The simulated issuer's hint in test mode, around the code it accepts. */
  challengeTestHint: string;
  /** Card-testing limits reached: the customer should wait, not retry at once. */
  velocityLimited: string;
  /** A single-use payment link paid (or being paid) by someone else: this payment never started. */
  linkUsed: string;
  /** The payment link of the order was deactivated or expired. */
  linkInactive: string;
  /** Too many orders started on a payment link (from this network, or by everyone at once): wait a moment. */
  linkBusy: string;
  /** Customer-facing texts of every decline code the core sends; a new code fails the typecheck here. */
  decline: Readonly<Record<DeclineCode, string>>;
}

/** Every UI string of the checkout pages, in one language. `{name}` marks a placeholder. */
export interface Messages {
  checkout: string;
  payMerchant: string;
  testMode: string;
  summary: string;
  reference: string;
  item: string;
  amount: string;
  total: string;
  openUntil: string;
  payByCard: string;
  /** Title of the order's customer's saved cards. */
  savedCards: string;
  /** One saved card's button: {amount}, {brand}, {last4}, {expiry}. */
  payWithSavedCard: string;
  /** The card form's checkbox when the order names a customer. */
  saveCard: string;
  cardNumber: string;
  expiry: string;
  expiryPlaceholder: string;
  cvc: string;
  nameOnCard: string;
  pay: string;
  noScript: string;
  wallet: string;
  walletPay: string;
  walletNote: string;
  bankTransfer: string;
  bankIntro: string;
  /** A payment link's page, before the order exists: what the bank transfer button does ({amount}). */
  bankStartIntro: string;
  /** That button. */
  bankStart: string;
  iban: string;
  bic: string;
  accountHolder: string;
  referenceToQuote: string;
  lastFailure: string;
  attemptsNone: string;
  noMethods: string;
  challengeTitle: string;
  challengeIssuer: string;
  challengeIntro: string;
  challengeCode: string;
  challengeSubmit: string;
  challengeCancel: string;
  receiptTitle: string;
  receiptThanks: string;
  /** A manual order's receipt while authorized: the payment is approved, not charged yet. */
  authorizedTitle: string;
  authorizedNotice: string;
  authorizedAt: string;
  merchant: string;
  paidWith: string;
  cardEnding: string;
  methodCard: string;
  methodWallet: string;
  methodBankTransfer: string;
  paidAt: string;
  orderId: string;
  returnTo: string;
  redirectNotice: string;
  stay: string;
  expiredTitle: string;
  expiredBody: string;
  notFoundTitle: string;
  notFoundBody: string;
  errorTitle: string;
  linkDeactivatedTitle: string;
  linkDeactivatedBody: string;
  linkExpiredTitle: string;
  linkExpiredBody: string;
  linkCompletedTitle: string;
  linkCompletedBody: string;
  errorBody: string;
  errorReference: string;
  client: ClientMessages;
}

const en: Messages = {
  checkout: 'Checkout',
  payMerchant: 'Pay {merchant}',
  testMode: 'Test mode: no real payment will be made.',
  summary: 'Order summary',
  reference: 'Reference',
  item: 'Item',
  amount: 'Amount',
  total: 'Total',
  openUntil: 'You can pay until {date}.',
  payByCard: 'Pay by card',
  savedCards: 'Your saved cards',
  payWithSavedCard: 'Pay {amount} with {brand} •••• {last4} (expires {expiry})',
  saveCard: 'Save this card for future payments',
  cardNumber: 'Card number',
  expiry: 'Expiry date (MM/YY)',
  expiryPlaceholder: 'MM/YY',
  cvc: 'Security code (CVC)',
  nameOnCard: 'Name on card',
  pay: 'Pay {amount}',
  noScript: 'Card and wallet payments need JavaScript. Turn it on and reload this page.',
  wallet: 'Test Wallet',
  walletPay: 'Pay with Test Wallet',
  walletNote: 'A simulated wallet, offered in test mode only.',
  bankTransfer: 'Bank transfer',
  bankIntro: 'Transfer exactly {amount} to the account below and quote the reference, so that your payment can be matched. Your order is paid once the money arrives.',
  bankStartIntro: 'Pay {amount} by bank transfer: you get the account to transfer to and the reference to quote.',
  bankStart: 'Show the bank details',
  iban: 'IBAN',
  bic: 'BIC',
  accountHolder: 'Account holder',
  referenceToQuote: 'Reference to quote',
  lastFailure: 'Your last payment attempt failed: {message}',
  attemptsNone: 'No more card or wallet attempts are possible for this order.',
  noMethods: 'No payment method is available for this order. Please contact {merchant}.',
  challengeTitle: 'Confirm your payment',
  challengeIssuer: 'Simulated card issuer',
  challengeIntro: 'Your card issuer asks you to confirm the payment of {amount} to {merchant}.',
  challengeCode: 'Verification code',
  challengeSubmit: 'Confirm',
  challengeCancel: 'Cancel',
  receiptTitle: 'Payment successful',
  receiptThanks: 'Thank you. {merchant} has received your payment.',
  authorizedTitle: 'Payment authorized',
  authorizedNotice: 'Thank you. Your payment is authorized: the amount is reserved on your account, and {merchant} will charge it when your order is confirmed. Nothing has been charged yet.',
  authorizedAt: 'Authorized on',
  merchant: 'Merchant',
  paidWith: 'Paid with',
  cardEnding: '{brand} ending in {last4}',
  methodCard: 'Card',
  methodWallet: 'Wallet',
  methodBankTransfer: 'Bank transfer',
  paidAt: 'Date',
  orderId: 'Order ID',
  returnTo: 'Return to {merchant}',
  redirectNotice: 'You will be taken back to {merchant} in {seconds} seconds.',
  stay: 'Stay on this page',
  expiredTitle: 'This checkout has expired',
  expiredBody: 'The time to pay order {reference} at {merchant} has run out. No money was taken. Ask {merchant} for a new payment link.',
  notFoundTitle: 'Checkout not found',
  notFoundBody: 'This payment link is not valid. Check the link, or ask the merchant for a new one.',
  errorTitle: 'Something went wrong',
  linkDeactivatedTitle: 'This payment link is no longer active',
  linkDeactivatedBody: '{merchant} has switched off this payment link, so it takes no payment. No money was taken. Ask {merchant} for a new link.',
  linkExpiredTitle: 'This payment link has expired',
  linkExpiredBody: 'The time to pay through this link at {merchant} has run out. No money was taken. Ask {merchant} for a new link.',
  linkCompletedTitle: 'This payment link has already been paid',
  linkCompletedBody: 'This link accepts one payment only, and it has been made. Nothing more can be paid here. If you did not make that payment, contact {merchant}.',
  errorBody: 'This page could not be loaded. Please try again in a moment.',
  errorReference: 'Reference for support: {id}',
  client: {
    numberRequired: 'Enter the card number.',
    numberInvalid: 'This card number is not valid. Check the digits.',
    expiryInvalid: 'Enter the expiry date as MM/YY, for example 04/29.',
    expiryPast: 'This card has expired.',
    cvcInvalid: 'Enter the {digits}-digit security code.',
    nameRequired: 'Enter the name as it appears on the card.',
    codeRequired: 'Enter the verification code.',
    codeWrong: 'That code is not correct. Try again.',
    fixErrors: 'Please correct the highlighted fields.',
    processing: 'Processing your payment…',
    succeeded: 'Payment successful. Loading your receipt…',
    declined: 'Your payment was declined. Try another card.',
    network: 'The payment service could not be reached. Try again: you will not be charged twice.',
    attemptsExhausted: 'Too many attempts. This order accepts no more card or wallet payments.',
    stale: 'This order has changed. Loading its current state…',
    inProgress: 'A payment for this order is still being processed. Wait a moment, then try again.',
    generic: 'Something went wrong. Reload the page and try again.',
    authenticationCancelled: 'You cancelled the confirmation. You can try again.',
    attemptsOne: '1 attempt remaining.',
    attemptsOther: '{count} attempts remaining.',
    challengeTestHint: 'Test mode: enter {code} to pass the check, anything else to fail it.',
    velocityLimited: 'Too many payment attempts in a short time. Please wait a few minutes, then try again.',
    linkUsed: 'This payment link has just been used by someone else, and it accepts one payment only. You have not been charged.',
    linkInactive: 'This payment link is no longer active. You have not been charged.',
    linkBusy: 'Many payments are being started here right now. Please wait a moment, then try again. You have not been charged.',
    decline: {
      insufficient_funds: 'The card has insufficient funds. Try another card.',
      issuer_unavailable: 'Your bank could not be reached. Please try again.',
      expired_card: 'The card has expired. Try another card.',
      stolen_card: 'Your card was declined. Try another card.',
      do_not_honor: 'Your card was declined. Try another card.',
      authentication_required: 'Your bank asks you to confirm this payment. Try again to confirm it.',
      authentication_failed: 'Authentication failed. Try again, or use another card.',
      test_card_unknown: "This card is not one of this sandbox's test cards.",
      test_card_in_live_mode: 'Your card was declined. Use a real card.',
      processing_unavailable: 'This payment method is not available right now.',
    },
  },
};

const de: Messages = {
  checkout: 'Bezahlen',
  payMerchant: '{merchant} bezahlen',
  testMode: 'Testmodus: Es findet keine echte Zahlung statt.',
  summary: 'Bestellübersicht',
  reference: 'Referenz',
  item: 'Artikel',
  amount: 'Betrag',
  total: 'Gesamt',
  openUntil: 'Sie können bis {date} bezahlen.',
  payByCard: 'Mit Karte bezahlen',
  savedCards: 'Ihre gespeicherten Karten',
  payWithSavedCard: '{amount} mit {brand} •••• {last4} bezahlen (gültig bis {expiry})',
  saveCard: 'Diese Karte für künftige Zahlungen speichern',
  cardNumber: 'Kartennummer',
  expiry: 'Gültig bis (MM/JJ)',
  expiryPlaceholder: 'MM/JJ',
  cvc: 'Prüfnummer (CVC)',
  nameOnCard: 'Name auf der Karte',
  pay: '{amount} bezahlen',
  noScript: 'Karten- und Wallet-Zahlungen benötigen JavaScript. Bitte aktivieren Sie es und laden Sie die Seite neu.',
  wallet: 'Test-Wallet',
  walletPay: 'Mit Test-Wallet bezahlen',
  walletNote: 'Eine simulierte Wallet, nur im Testmodus verfügbar.',
  bankTransfer: 'Banküberweisung',
  bankIntro: 'Überweisen Sie genau {amount} auf das folgende Konto und geben Sie den Verwendungszweck an, damit Ihre Zahlung zugeordnet werden kann. Die Bestellung ist bezahlt, sobald das Geld eingegangen ist.',
  bankStartIntro: 'Bezahlen Sie {amount} per Überweisung: Sie erhalten das Konto und den anzugebenden Verwendungszweck.',
  bankStart: 'Bankverbindung anzeigen',
  iban: 'IBAN',
  bic: 'BIC',
  accountHolder: 'Kontoinhaber',
  referenceToQuote: 'Verwendungszweck',
  lastFailure: 'Ihr letzter Zahlungsversuch ist fehlgeschlagen: {message}',
  attemptsNone: 'Für diese Bestellung sind keine weiteren Karten- oder Wallet-Zahlungsversuche möglich.',
  noMethods: 'Für diese Bestellung ist keine Zahlungsart verfügbar. Bitte wenden Sie sich an {merchant}.',
  challengeTitle: 'Zahlung bestätigen',
  challengeIssuer: 'Simulierte kartenausgebende Bank',
  challengeIntro: 'Ihre Bank bittet Sie, die Zahlung von {amount} an {merchant} zu bestätigen.',
  challengeCode: 'Bestätigungscode',
  challengeSubmit: 'Bestätigen',
  challengeCancel: 'Abbrechen',
  receiptTitle: 'Zahlung erfolgreich',
  receiptThanks: 'Vielen Dank. {merchant} hat Ihre Zahlung erhalten.',
  authorizedTitle: 'Zahlung autorisiert',
  authorizedNotice: 'Vielen Dank. Ihre Zahlung ist autorisiert: Der Betrag ist auf Ihrem Konto reserviert, und {merchant} bucht ihn ab, sobald Ihre Bestellung bestätigt ist. Es wurde noch nichts abgebucht.',
  authorizedAt: 'Autorisiert am',
  merchant: 'Händler',
  paidWith: 'Bezahlt mit',
  cardEnding: '{brand} mit Endziffern {last4}',
  methodCard: 'Karte',
  methodWallet: 'Wallet',
  methodBankTransfer: 'Banküberweisung',
  paidAt: 'Datum',
  orderId: 'Bestellnummer',
  returnTo: 'Zurück zu {merchant}',
  redirectNotice: 'Sie werden in {seconds} Sekunden zu {merchant} zurückgeleitet.',
  stay: 'Auf dieser Seite bleiben',
  expiredTitle: 'Diese Zahlung ist abgelaufen',
  expiredBody: 'Die Zeit zum Bezahlen der Bestellung {reference} bei {merchant} ist abgelaufen. Es wurde kein Geld abgebucht. Bitten Sie {merchant} um einen neuen Zahlungslink.',
  notFoundTitle: 'Zahlung nicht gefunden',
  notFoundBody: 'Dieser Zahlungslink ist ungültig. Prüfen Sie den Link oder bitten Sie den Händler um einen neuen.',
  errorTitle: 'Etwas ist schiefgelaufen',
  linkDeactivatedTitle: 'Dieser Zahlungslink ist nicht mehr aktiv',
  linkDeactivatedBody: '{merchant} hat diesen Zahlungslink deaktiviert; er nimmt keine Zahlungen mehr an. Es wurde kein Geld abgebucht. Bitten Sie {merchant} um einen neuen Link.',
  linkExpiredTitle: 'Dieser Zahlungslink ist abgelaufen',
  linkExpiredBody: 'Die Zeit zum Bezahlen über diesen Link bei {merchant} ist abgelaufen. Es wurde kein Geld abgebucht. Bitten Sie {merchant} um einen neuen Link.',
  linkCompletedTitle: 'Dieser Zahlungslink wurde bereits bezahlt',
  linkCompletedBody: 'Dieser Link nimmt nur eine Zahlung an, und sie ist erfolgt. Hier kann nichts mehr bezahlt werden. Falls Sie diese Zahlung nicht geleistet haben, wenden Sie sich an {merchant}.',
  errorBody: 'Diese Seite konnte nicht geladen werden. Bitte versuchen Sie es gleich noch einmal.',
  errorReference: 'Referenz für den Support: {id}',
  client: {
    numberRequired: 'Geben Sie die Kartennummer ein.',
    numberInvalid: 'Diese Kartennummer ist ungültig. Bitte prüfen Sie die Ziffern.',
    expiryInvalid: 'Geben Sie das Ablaufdatum als MM/JJ ein, zum Beispiel 04/29.',
    expiryPast: 'Diese Karte ist abgelaufen.',
    cvcInvalid: 'Geben Sie die {digits}-stellige Prüfnummer ein.',
    nameRequired: 'Geben Sie den Namen so ein, wie er auf der Karte steht.',
    codeRequired: 'Geben Sie den Bestätigungscode ein.',
    codeWrong: 'Dieser Code ist nicht korrekt. Bitte versuchen Sie es erneut.',
    fixErrors: 'Bitte korrigieren Sie die markierten Felder.',
    processing: 'Ihre Zahlung wird verarbeitet …',
    succeeded: 'Zahlung erfolgreich. Ihre Quittung wird geladen …',
    declined: 'Ihre Zahlung wurde abgelehnt. Versuchen Sie es mit einer anderen Karte.',
    network: 'Der Zahlungsdienst ist nicht erreichbar. Versuchen Sie es erneut – Sie werden nicht doppelt belastet.',
    attemptsExhausted: 'Zu viele Versuche. Für diese Bestellung sind keine weiteren Karten- oder Wallet-Zahlungen möglich.',
    stale: 'Diese Bestellung hat sich geändert. Der aktuelle Stand wird geladen …',
    inProgress: 'Eine Zahlung für diese Bestellung wird noch verarbeitet. Warten Sie einen Moment und versuchen Sie es dann erneut.',
    generic: 'Etwas ist schiefgelaufen. Laden Sie die Seite neu und versuchen Sie es erneut.',
    authenticationCancelled: 'Sie haben die Bestätigung abgebrochen. Sie können es erneut versuchen.',
    attemptsOne: 'Noch 1 Versuch.',
    attemptsOther: 'Noch {count} Versuche.',
    challengeTestHint: 'Testmodus: Geben Sie {code} ein, um die Prüfung zu bestehen, oder etwas anderes, um sie scheitern zu lassen.',
    velocityLimited: 'Zu viele Zahlungsversuche in kurzer Zeit. Bitte warten Sie einige Minuten und versuchen Sie es dann erneut.',
    linkUsed: 'Dieser Zahlungslink wurde gerade von jemand anderem verwendet und nimmt nur eine Zahlung an. Ihnen wurde nichts abgebucht.',
    linkInactive: 'Dieser Zahlungslink ist nicht mehr aktiv. Ihnen wurde nichts abgebucht.',
    linkBusy: 'Gerade werden hier sehr viele Zahlungen begonnen. Bitte warten Sie einen Moment und versuchen Sie es dann erneut. Ihnen wurde nichts abgebucht.',
    decline: {
      insufficient_funds: 'Die Karte ist nicht ausreichend gedeckt. Versuchen Sie es mit einer anderen Karte.',
      issuer_unavailable: 'Ihre Bank war nicht erreichbar. Bitte versuchen Sie es erneut.',
      expired_card: 'Die Karte ist abgelaufen. Versuchen Sie es mit einer anderen Karte.',
      stolen_card: 'Ihre Karte wurde abgelehnt. Versuchen Sie es mit einer anderen Karte.',
      authentication_required: 'Ihre Bank möchte diese Zahlung bestätigen lassen. Versuchen Sie es erneut, um sie zu bestätigen.',
      do_not_honor: 'Ihre Karte wurde abgelehnt. Versuchen Sie es mit einer anderen Karte.',
      authentication_failed: 'Die Authentifizierung ist fehlgeschlagen. Versuchen Sie es erneut oder verwenden Sie eine andere Karte.',
      test_card_unknown: 'Diese Karte ist keine Testkarte dieser Sandbox.',
      test_card_in_live_mode: 'Ihre Karte wurde abgelehnt. Verwenden Sie eine echte Karte.',
      processing_unavailable: 'Diese Zahlungsart ist derzeit nicht verfügbar.',
    },
  },
};

const CATALOGUE: Readonly<Record<Language, Messages>> = { en, de };

/** The catalogue of one language. */
export function messagesFor(language: Language): Messages {
  return CATALOGUE[language];
}

/** Fills `{name}` placeholders; unknown names are left as they are. Returns plain text (escape it on output). */
export function fill(template: string, values: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

const pluralRules = new Map(LANGUAGES.map((language) => [language, new Intl.PluralRules(language)]));

/**
 * Up to how many attempts left the page tells the shopper how many remain. The limit (10 submissions per
 * order, attempt-policy.ts) is there against card testing; a shopper with many left has no use for the
 * count ("9 attempts remaining" after one failed 3-D Secure check reads like a warning about nothing),
 * one with few left does: they may want another card or the bank transfer. assets/checkout.js keeps
 * the same rule in fewAttemptsLeft.
 */
export const FEW_ATTEMPTS = 3;

/** Whether the page shows the shopper how many attempts are left: only when some, and few, are. */
export function fewAttemptsLeft(left: number): boolean {
  return left > 0 && left <= FEW_ATTEMPTS;
}

/** "3 attempts remaining." in a language, with its plural rules. */
export function attemptsText(language: Language, count: number): string {
  const client = CATALOGUE[language].client;
  const template = pluralRules.get(language)!.select(count) === 'one' ? client.attemptsOne : client.attemptsOther;
  return fill(template, { count });
}

/** The customer's language, and the locale to format numbers and dates in. */
export interface PageLocale {
  readonly language: Language;
  /** A canonical BCP 47 tag of that language, e.g. "de-AT" or "en". */
  readonly locale: string;
}

const FALLBACK: PageLocale = { language: 'en', locale: 'en' };

function isLanguage(value: string): value is Language {
  return (LANGUAGES as readonly string[]).includes(value);
}

/**
 * Picks the first language of an Accept-Language header (by q-value, then
 * order) that the catalogue has; English otherwise. A region the header gives
 * with it (de-AT, en-GB) is kept for number and date formatting.
 */
export function negotiateLocale(acceptLanguage: string | undefined): PageLocale {
  if (!acceptLanguage) return FALLBACK;
  const ranges = acceptLanguage
    .slice(0, 512)
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((r) => r.q > 0 && /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/.test(r.tag))
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranges) {
    const language = tag.split('-')[0]!.toLowerCase();
    if (!isLanguage(language)) continue;
    return { language, locale: canonicalLocale(tag, language) };
  }
  return FALLBACK;
}

function canonicalLocale(tag: string, language: Language): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    // Keep language and region only: extensions (-u-nu-…) would let the header pick digits or calendars.
    const locale = new Intl.Locale(canonical ?? language);
    return locale.region ? `${language}-${locale.region}` : language;
  } catch {
    return language;
  }
}
