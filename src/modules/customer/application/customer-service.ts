import { cancelNow } from '../../subscription/domain/subscription.entity.ts';
import { EVENT_ID_PREFIX } from '../../event/domain/domain-event.ts';
import { create, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import {
  CreateCardRequestSchema,
  CreateCardResponseSchema,
  CreateCardTokenRequestSchema,
  CreateCardTokenResponseSchema,
  CreateCustomerRequestSchema,
  CreateCustomerResponseSchema,
  DeleteCardRequestSchema,
  DeleteCardResponseSchema,
  DeleteCustomerRequestSchema,
  DeleteCustomerResponseSchema,
  GetCardResponseSchema,
  GetCustomerResponseSchema,
  ListCardsResponseSchema,
  ListCustomersResponseSchema,
  UpdateCustomerRequestSchema,
  UpdateCustomerResponseSchema,
  type CustomerService,
  type VaultCardDetails,
} from '../../../gen/checkout/v1/customer_pb.ts';
import { CUSTOMER_ID_PREFIX, newCustomer, parseCustomerFields, updateCustomer, type Customer } from '../domain/customer.entity.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import { parseCard, type Card } from '../../payment/domain/card.ts';
import { invalid } from '../../../kernel/domain/domain-error.ts';
import type { CustomerRepository } from '../ports/customer-repository.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { CardVault } from '../ports/card-vault.port.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../order/application/list-orders.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { IDEMPOTENCY_KEY_HEADER } from '../../../kernel/application/idempotency-key.ts';
import { cardNotFound, type CardVaultUseCases } from './card-vault-use-cases.ts';
import { cardTokenToProto, customerToProto, savedCardToProto } from './customer-mapper.ts';

/** What the customer service runs on. */
export interface CustomerServiceDeps {
  readonly authenticate: Authenticate;
  readonly idempotent: Idempotent;
  readonly customers: CustomerRepository;
  /** Reads of cards outside a transaction. */
  readonly cards: CardVault;
  readonly vault: CardVaultUseCases;
  readonly ids: IdGenerator;
  readonly clock: Clock;
}

/** The error of a customer id that is not the caller's (or is deleted). */
export function customerNotFound(id: string): ApplicationError {
  return new ApplicationError('customer.not_found', `No such customer: "${id.slice(0, 60)}".`, 'id');
}

/** Validates raw card fields (parseCard's rules: Luhn, expiry, CVC length, name). */
function cardOf(details: VaultCardDetails | undefined, now: Date): Card {
  return parseCard({ number: details?.number ?? '', expMonth: details?.expMonth ?? 0, expYear: details?.expYear ?? 0, cvc: details?.cvc ?? '', name: details?.name ?? '' }, now);
}

/** Implements checkout.v1.CustomerService: customers, their vaulted cards, and card tokens. */
export function createCustomerService(deps: CustomerServiceDeps): ServiceImpl<typeof CustomerService> {
  const secret = (ctx: HandlerContext) => deps.authenticate(ctx, 'secret');
  /**
   * The request an Idempotency-Key's fingerprint is taken of: card fields replaced by their keyed
   * hash (the vault's requestFingerprint), so that another card under the key (any field but the
   * CVC, which the token check compares) is a different request, and no record holds a number or
   * anything that finds one without the vault's keys. Computed only when a key is sent.
   */
  const fingerprinted = async <T extends { card?: VaultCardDetails | undefined }>(ctx: HandlerContext, scope: Scope, request: T): Promise<T> => {
    if (!request.card || ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER) === null) return request;
    const number = await deps.vault.requestFingerprint(scope, request.card);
    return { ...request, card: { ...request.card, number, expMonth: 0, expYear: 0, cvc: '', name: '' } };
  };
  const keyed = async <I extends DescMessage, O extends DescMessage>(
    ctx: HandlerContext,
    operation: string,
    input: I,
    request: MessageShape<I>,
    output: O,
    fn: (scope: Scope, tx: TransactionScope) => Promise<MessageShape<O>>,
  ) => {
    const scope = await secret(ctx);
    const fingerprintOf = (await fingerprinted(ctx, scope, request as { card?: VaultCardDetails })) as MessageShape<I>;
    return deps.idempotent(ctx, scope, { operation, input, request: fingerprintOf, output }, (tx) => fn(scope, tx));
  };
  const found = async (scope: Scope, id: string, customers: CustomerRepository = deps.customers): Promise<Customer> => {
    const customer = id.startsWith(CUSTOMER_ID_PREFIX) ? await customers.findById(scope, id) : undefined;
    if (!customer) throw customerNotFound(id);
    return customer;
  };
  const locked = async (tx: TransactionScope, scope: Scope, id: string): Promise<Customer> => {
    const customer = id.startsWith(CUSTOMER_ID_PREFIX) ? await tx.customers.lock(scope, id) : undefined;
    if (!customer) throw customerNotFound(id);
    return customer;
  };

  return {
    createCustomer: (req, ctx) =>
      keyed(ctx, 'customers.create', CreateCustomerRequestSchema, req, CreateCustomerResponseSchema, async (scope, tx) => {
        const fields = parseCustomerFields({ email: req.email || undefined, name: req.name || undefined, reference: req.reference || undefined, metadata: req.metadata });
        let testClockId: string | null = null;
        if (req.testClock !== undefined) {
          if (scope.livemode) throw invalid('request.parameter_invalid', 'test_clock', 'Test clocks are test mode only; a live customer runs on the real time.');
          const clock = await tx.testClocks.findById(scope.merchantId, req.testClock);
          if (!clock) throw invalid('request.parameter_invalid', 'test_clock', `No such test clock: "${req.testClock.slice(0, 60)}".`);
          testClockId = clock.id;
        }
        const customer = newCustomer({ id: deps.ids.newId(CUSTOMER_ID_PREFIX), merchantId: scope.merchantId, livemode: scope.livemode, fields, now: deps.clock.now(), testClockId });
        await tx.customers.insert(customer);
        return create(CreateCustomerResponseSchema, { customer: customerToProto(customer) });
      }),
    getCustomer: async (req, ctx) => create(GetCustomerResponseSchema, { customer: customerToProto(await found(await secret(ctx), req.id)) }),
    listCustomers: async (req, ctx) => {
      const scope = await secret(ctx);
      const limit = req.limit === 0 ? DEFAULT_LIST_LIMIT : req.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new ApplicationError('list.limit_invalid', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`, 'limit');
      const page = await deps.customers.list(scope, { limit, startingAfter: req.startingAfter, email: req.email });
      return create(ListCustomersResponseSchema, { customers: page.customers.map(customerToProto), hasMore: page.hasMore });
    },
    updateCustomer: (req, ctx) =>
      keyed(ctx, 'customers.update', UpdateCustomerRequestSchema, req, UpdateCustomerResponseSchema, async (scope, tx) => {
        const current = await locked(tx, scope, req.id);
        const changes = parseCustomerFields({ email: req.email, name: req.name, reference: req.reference, metadata: Object.keys(req.metadata).length ? req.metadata : undefined });
        const updated = updateCustomer(current, changes, deps.clock.now());
        await tx.customers.update(updated);
        return create(UpdateCustomerResponseSchema, { customer: customerToProto(updated) });
      }),
    deleteCustomer: (req, ctx) =>
      keyed(ctx, 'customers.delete', DeleteCustomerRequestSchema, req, DeleteCustomerResponseSchema, async (scope, tx) => {
        await locked(tx, scope, req.id);
        // Its subscriptions end with it (their cards are about to be erased), as at Stripe.
        for (const s of await tx.subscriptions.lockOfCustomer(req.id)) {
          if (s.status === 'canceled') continue;
          const t = cancelNow(s, 'customer_deleted', { eventId: deps.ids.newId(EVENT_ID_PREFIX), now: deps.clock.now() });
          await tx.subscriptions.save(t.subscription);
          await tx.outbox.append(t.event);
        }
        // Erased, not flagged: the rows holding the sealed numbers go with the customer's fields.
        const cardsErased = await tx.vault.deleteCardsOf(req.id);
        await tx.customers.markDeleted(scope, req.id, deps.clock.now());
        return create(DeleteCustomerResponseSchema, { id: req.id, cardsErased });
      }),
    createCard: (req, ctx) =>
      keyed(ctx, 'customers.cards.create', CreateCardRequestSchema, req, CreateCardResponseSchema, async (scope, tx) => {
        await locked(tx, scope, req.customerId);
        if (req.card && req.token) throw invalid('request.parameter_invalid', 'token', 'Send either card (raw card fields) or token, not both.');
        let card: Card;
        if (req.token) card = await deps.vault.takeToken(tx, scope, req.token);
        else if (req.card) card = cardOf(req.card, deps.clock.now());
        else throw invalid('request.parameter_missing', 'token', 'Send token (tok_… from POST /v1/tokens, preferred) or card (raw card fields, PCI-compliant servers only).');
        const saved = await deps.vault.vaultCard(tx, scope, req.customerId, { kind: 'verify', card });
        return create(CreateCardResponseSchema, { card: savedCardToProto(saved) });
      }),
    getCard: async (req, ctx) => {
      const scope = await secret(ctx);
      await found(scope, req.customerId);
      const card = await deps.cards.findCard(scope, req.customerId, req.cardId);
      if (!card) throw cardNotFound(req.cardId, 'card_id');
      return create(GetCardResponseSchema, { card: savedCardToProto(card) });
    },
    listCards: async (req, ctx) => {
      const scope = await secret(ctx);
      await found(scope, req.customerId);
      return create(ListCardsResponseSchema, { cards: (await deps.cards.listCards(scope, req.customerId)).map(savedCardToProto) });
    },
    deleteCard: (req, ctx) =>
      keyed(ctx, 'customers.cards.delete', DeleteCardRequestSchema, req, DeleteCardResponseSchema, async (scope, tx) => {
        await locked(tx, scope, req.customerId);
        if (!(await tx.vault.deleteCard(scope, req.customerId, req.cardId))) throw cardNotFound(req.cardId, 'card_id');
        return create(DeleteCardResponseSchema, { id: req.cardId });
      }),
    createCardToken: async (req, ctx) => {
      // A publishable key is enough: this is the call a browser or app makes.
      const scope = await deps.authenticate(ctx, 'publishable');
      const call = {
        operation: 'tokens.create',
        input: CreateCardTokenRequestSchema,
        request: await fingerprinted(ctx, scope, req),
        output: CreateCardTokenResponseSchema,
        // The CVC is in no fingerprint: a repeat is the same request only if the token still holds its CVC too.
        replays: async (tx: TransactionScope, response: MessageShape<typeof CreateCardTokenResponseSchema>) => !req.card || deps.vault.tokenHoldsCard(tx, scope, response.token?.id ?? '', req.card),
      };
      return deps.idempotent(ctx, scope, call, async (tx) => {
        if (!req.card) throw invalid('request.parameter_missing', 'card', 'card is required: number, exp_month, exp_year, cvc and name.');
        const token = await deps.vault.createToken(tx, scope, cardOf(req.card, deps.clock.now()));
        return create(CreateCardTokenResponseSchema, { token: cardTokenToProto(token) });
      });
    },
  };
}
