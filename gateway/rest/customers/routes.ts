import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { CustomerService } from '../../../src/gen/checkout/v1/customer_pb.ts';
import { emptyBodyIsEmptyObject } from '../shared/body.ts';
import { coreCall } from '../shared/core-call.ts';
import { page } from '../shared/list-query.ts';
import type { IdParams } from '../shared/schemas.ts';
import { cardTokenJson, customerJson, savedCardJson } from './customer-json.ts';
import {
  createCardSchema,
  createCustomerSchema,
  createTokenSchema,
  deleteCardSchema,
  deleteCustomerSchema,
  listCardsSchema,
  listCustomersSchema,
  retrieveCardSchema,
  retrieveCustomerSchema,
  updateCustomerSchema,
  type CardParams,
  type CreateCardBody,
  type CreateCustomerBody,
  type CreateTokenBody,
  type CustomerListQuery,
  type UpdateCustomerBody,
} from './schemas.ts';

type CardFields = NonNullable<CreateCardBody['card']>;
const cardDetails = (card: CardFields) => ({ number: card.number, expMonth: card.exp_month, expYear: card.exp_year, cvc: card.cvc, name: card.name });

/** Registers /v1/customers (with their cards) and /v1/tokens, each route a call to checkout.v1.CustomerService. */
export function registerCustomerRoutes(app: FastifyInstance, customers: Client<typeof CustomerService>): void {
  app.post<{ Body: CreateCustomerBody }>('/v1/customers', { schema: createCustomerSchema, preValidation: emptyBodyIsEmptyObject }, async (req, reply) => {
    const body = req.body;
    const res = await customers.createCustomer({ email: body.email ?? '', name: body.name ?? '', reference: body.reference ?? '', metadata: (body.metadata ?? {}) as Record<string, string>, testClock: body.test_clock }, coreCall(req));
    return reply.code(201).send(customerJson(res.customer!));
  });

  app.get<{ Querystring: CustomerListQuery }>('/v1/customers', { schema: listCustomersSchema }, async (req) => {
    const res = await customers.listCustomers({ ...page(req.query), email: req.query.email }, coreCall(req));
    return { object: 'list', url: '/v1/customers', has_more: res.hasMore, data: res.customers.map(customerJson) };
  });

  app.get<{ Params: IdParams }>('/v1/customers/:id', { schema: retrieveCustomerSchema }, async (req) => {
    const res = await customers.getCustomer({ id: req.params.id }, coreCall(req));
    return customerJson(res.customer!);
  });

  app.post<{ Params: IdParams; Body: UpdateCustomerBody }>('/v1/customers/:id', { schema: updateCustomerSchema }, async (req) => {
    const body = req.body;
    const res = await customers.updateCustomer(
      { id: req.params.id, email: body.email ?? undefined, name: body.name ?? undefined, reference: body.reference ?? undefined, metadata: (body.metadata ?? {}) as Record<string, string> },
      coreCall(req),
    );
    return customerJson(res.customer!);
  });

  app.delete<{ Params: IdParams }>('/v1/customers/:id', { schema: deleteCustomerSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await customers.deleteCustomer({ id: req.params.id }, coreCall(req));
    return { id: res.id, object: 'customer', deleted: true, cards_erased: res.cardsErased };
  });

  app.post<{ Params: IdParams; Body: CreateCardBody }>('/v1/customers/:id/cards', { schema: createCardSchema }, async (req, reply) => {
    const body = req.body;
    const res = await customers.createCard({ customerId: req.params.id, token: body.token ?? '', card: body.card ? cardDetails(body.card) : undefined }, coreCall(req));
    return reply.code(201).send(savedCardJson(res.card!));
  });

  app.get<{ Params: IdParams }>('/v1/customers/:id/cards', { schema: listCardsSchema }, async (req) => {
    const res = await customers.listCards({ customerId: req.params.id }, coreCall(req));
    return { object: 'list', url: `/v1/customers/${req.params.id}/cards`, has_more: false, data: res.cards.map(savedCardJson) };
  });

  app.get<{ Params: CardParams }>('/v1/customers/:id/cards/:card', { schema: retrieveCardSchema }, async (req) => {
    const res = await customers.getCard({ customerId: req.params.id, cardId: req.params.card }, coreCall(req));
    return savedCardJson(res.card!);
  });

  app.delete<{ Params: CardParams }>('/v1/customers/:id/cards/:card', { schema: deleteCardSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await customers.deleteCard({ customerId: req.params.id, cardId: req.params.card }, coreCall(req));
    return { id: res.id, object: 'card', deleted: true };
  });

  app.post<{ Body: CreateTokenBody }>('/v1/tokens', { schema: createTokenSchema }, async (req, reply) => {
    const res = await customers.createCardToken({ card: cardDetails(req.body.card) }, coreCall(req));
    return reply.code(201).send(cardTokenJson(res.token!));
  });
}
