// The mobile SDK bridge: a headless checkout flow for React Native and other fetch environments.
export {
  createCheckoutSession,
  newSubmissionId,
  CheckoutSessionError,
  type CheckoutSession,
  type CheckoutSessionOptions,
  type CheckoutState,
  type CheckoutOrder,
  type CardInput,
  type PaymentResult,
  type ChallengeRedirect,
  type MethodName,
  type OrderStatusName,
  type SavedCardSummary,
} from './session.ts';
