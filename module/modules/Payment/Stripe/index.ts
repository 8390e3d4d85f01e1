// The Stripe Payment module (module/modules/Payment/Stripe): the class the platform hosts.
export { Stripe } from './stripe.ts';
