// @hosted-checkout/fields: the embedded card fields' library as a module, for pages built with a bundler
// (the checkout host also serves it as the classic script /js/fields.js, global.ts). The frames it
// mounts always come from the checkout host, so pass checkoutHost.
export { CheckoutFields, type CheckoutFieldsInstance, type CheckoutFieldsOptions, type FieldChange, type FieldElement, type FieldEvent, type FieldOptions } from './fields.ts';
export { FieldStyleError, type FieldStyle } from './style.ts';
export type { ConfirmResult, FieldKind } from './protocol.ts';
export type { Brand, FieldErrorCode } from './card.ts';
