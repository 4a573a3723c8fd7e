// The entry of /js/fields.js: a classic script that defines window.CheckoutFields for the merchant's page.
import { CheckoutFields } from './fields.ts';

(globalThis as { CheckoutFields?: typeof CheckoutFields }).CheckoutFields = CheckoutFields;
