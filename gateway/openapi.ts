/**
 * The OpenAPI 3.1 description of the REST API, served at /v1/openapi.json.
 * test/openapi.test.ts fails when a /v1 route is missing here or vice versa.
 */
export function openApiDocument(publicUrl: string): Record<string, unknown> {
  const errorResponse = (description: string) => ({
    description,
    headers: { 'Request-Id': { $ref: '#/components/headers/RequestId' } },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  const commonErrors = {
    '400': errorResponse('Invalid request: a parameter is missing, unknown or breaks a rule; `param` names it.'),
    '401': errorResponse('Missing, malformed, unknown or revoked API key.'),
    '403': errorResponse('A publishable key was sent where a secret key is needed.'),
    '429': {
      ...errorResponse('The API key spent its rate limit (code rate_limit_exceeded); retry after Retry-After seconds.'),
      headers: {
        'Request-Id': { $ref: '#/components/headers/RequestId' },
        'Retry-After': { description: 'Seconds until a request can succeed.', schema: { type: 'integer' } },
      },
    },
    '503': errorResponse('The database is unreachable; retry (with the same Idempotency-Key).'),
  };
  const ok = (description: string, schema: string) => ({
    description,
    headers: { 'Request-Id': { $ref: '#/components/headers/RequestId' } },
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
  });
  const list = (schema: string) => ({
    description: 'A list: {object: "list", url, has_more, data}.',
    content: {
      'application/json': {
        schema: { type: 'object', properties: { object: { const: 'list' }, url: { type: 'string' }, has_more: { type: 'boolean' }, data: { type: 'array', items: { $ref: `#/components/schemas/${schema}` } } } },
      },
    },
  });
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const keyParam = {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: '1-255 printable ASCII characters. A repeat of the same request within 24 hours answers the first response with Idempotent-Replayed: true and does nothing again.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  };
  const notFound = errorResponse('No such resource for this key (also for other merchants\' and the other mode\'s ids).');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hosted Checkout API',
      version: 'v1',
      description: 'Create orders, send customers to the hosted checkout, receive signed webhooks. Amounts are integers in minor units. See docs/api.md.',
    },
    servers: [{ url: publicUrl }],
    security: [{ bearerAuth: [] }],
    paths: {
      '/v1/orders': {
        post: {
          operationId: 'createOrder',
          summary: 'Create an order and receive its checkout URL',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: '1-255 printable ASCII characters. A repeat with the same body within 24 hours returns the original order with Idempotent-Replayed: true.',
              schema: { type: 'string', minLength: 1, maxLength: 255 },
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateOrder' } } } },
          responses: {
            '201': {
              description: 'The order, status pending (also for an idempotent replay).',
              headers: {
                'Request-Id': { $ref: '#/components/headers/RequestId' },
                'Idempotent-Replayed': { description: 'Present with value true when this is a replay.', schema: { type: 'string', enum: ['true'] } },
              },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
            },
            ...commonErrors,
            '413': errorResponse('Body larger than 1 MiB.'),
            '415': errorResponse('Body is not JSON.'),
            '422': errorResponse('Idempotency-Key reused with a different request (code idempotency_key_reused).'),
          },
        },
        get: {
          operationId: 'listOrders',
          summary: 'List orders, newest first',
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
            { name: 'starting_after', in: 'query', description: 'An order id; the page starts after it.', schema: { type: 'string' } },
            { name: 'reference', in: 'query', description: 'Only orders with exactly this reference.', schema: { type: 'string' } },
          ],
          responses: {
            '200': {
              description: 'A page of orders.',
              headers: { 'Request-Id': { $ref: '#/components/headers/RequestId' } },
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['object', 'url', 'has_more', 'data'],
                    properties: {
                      object: { const: 'list' },
                      url: { type: 'string' },
                      has_more: { type: 'boolean' },
                      data: { type: 'array', items: { $ref: '#/components/schemas/Order' } },
                    },
                  },
                },
              },
            },
            ...commonErrors,
          },
        },
      },
      '/v1/orders/{id}': {
        get: {
          operationId: 'retrieveOrder',
          summary: 'Retrieve an order',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^ord_' } }],
          responses: {
            '200': {
              description: 'The order.',
              headers: { 'Request-Id': { $ref: '#/components/headers/RequestId' } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
            },
            ...commonErrors,
            '404': errorResponse('No such order for this key (also for other merchants\' and the other mode\'s orders).'),
          },
        },
      },
      '/v1/test_helpers/orders/{id}/simulate_transfer': {
        post: {
          operationId: 'simulateTransfer',
          summary: 'Test mode only: mark the order\'s virtual-IBAN transfer as arrived, which pays it (method bank_transfer)',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^ord_' } }, keyParam],
          responses: {
            '200': {
              description: 'The paid order.',
              headers: { 'Request-Id': { $ref: '#/components/headers/RequestId' } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
            },
            ...commonErrors,
            '404': errorResponse('No such order for this key.'),
            '422': errorResponse('The order is already paid (order_already_paid) or expired (order_expired).'),
          },
        },
      },
      '/v1/webhook_endpoints': {
        post: {
          operationId: 'createWebhookEndpoint',
          summary: 'Register a webhook endpoint; the response carries its signing secret, once',
          parameters: [keyParam],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateWebhookEndpoint' } } } },
          responses: { '201': ok('The endpoint with its secret.', 'WebhookEndpointWithSecret'), ...commonErrors },
        },
        get: { operationId: 'listWebhookEndpoints', summary: 'List webhook endpoints', responses: { '200': list('WebhookEndpoint'), ...commonErrors } },
      },
      '/v1/webhook_endpoints/{id}': {
        get: { operationId: 'retrieveWebhookEndpoint', summary: 'Retrieve a webhook endpoint', parameters: [idParam], responses: { '200': ok('The endpoint.', 'WebhookEndpoint'), ...commonErrors, '404': notFound } },
        patch: {
          operationId: 'updateWebhookEndpoint',
          summary: 'Change the URL, the events, the description or the disabled flag',
          parameters: [idParam, keyParam],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/UpdateWebhookEndpoint' } } } },
          responses: { '200': ok('The endpoint.', 'WebhookEndpoint'), ...commonErrors, '404': notFound },
        },
        delete: { operationId: 'deleteWebhookEndpoint', summary: 'Delete a webhook endpoint; its queued deliveries stop', parameters: [idParam, keyParam], responses: { '200': { description: '{id, object, deleted: true}' }, ...commonErrors, '404': notFound } },
      },
      '/v1/webhook_endpoints/{id}/rotate_secret': {
        post: {
          operationId: 'rotateWebhookSecret',
          summary: 'Issue a new secret; the old one keeps signing for overlap_seconds (default 86400, at most 7 days)',
          parameters: [idParam, keyParam],
          requestBody: { required: false, content: { 'application/json': { schema: { type: 'object', additionalProperties: false, properties: { overlap_seconds: { type: 'integer', minimum: 1, maximum: 604800 } } } } } },
          responses: { '200': ok('The endpoint with its new secret and old_secret_expires_at.', 'WebhookEndpointWithSecret'), ...commonErrors, '404': notFound },
        },
      },
      '/v1/webhook_endpoints/{id}/replay': {
        post: {
          operationId: 'replayEvents',
          summary: 'Queue every event since a time for redelivery to this endpoint',
          parameters: [idParam, keyParam],
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['since'], additionalProperties: false, properties: { since: { type: 'string', format: 'date-time' } } } } } },
          responses: { '200': { description: '{object: "replay", endpoint_id, queued}' }, ...commonErrors, '404': notFound },
        },
      },
      '/v1/events': {
        get: {
          operationId: 'listEvents',
          summary: 'List events, newest first',
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
            { name: 'starting_after', in: 'query', schema: { type: 'string' } },
            { name: 'type', in: 'query', schema: { type: 'string' } },
            { name: 'order_id', in: 'query', schema: { type: 'string' } },
            { name: 'reference', in: 'query', schema: { type: 'string' } },
          ],
          responses: { '200': list('Event'), ...commonErrors },
        },
      },
      '/v1/events/{id}': {
        get: { operationId: 'retrieveEvent', summary: 'Retrieve an event', parameters: [idParam], responses: { '200': ok('The event.', 'Event'), ...commonErrors, '404': notFound } },
      },
      '/v1/events/{id}/deliveries': {
        get: { operationId: 'listDeliveryAttempts', summary: 'Every delivery attempt of an event, oldest first', parameters: [idParam], responses: { '200': list('DeliveryAttempt'), ...commonErrors, '404': notFound } },
      },
      '/v1/events/{id}/redeliver': {
        post: {
          operationId: 'redeliverEvent',
          summary: 'Send an event again, to one endpoint or every subscribed one',
          parameters: [idParam, keyParam],
          requestBody: { required: false, content: { 'application/json': { schema: { type: 'object', additionalProperties: false, properties: { endpoint_id: { type: 'string' } } } } } },
          responses: { '200': { description: '{object: "redelivery", event_id, queued}' }, ...commonErrors, '404': notFound },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'openApi',
          summary: 'This document',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'sk_test_… or sk_live_…; the key decides the mode.' } },
      headers: { RequestId: { description: 'Identifier of this request, also in error bodies.', schema: { type: 'string', pattern: '^req_' } } },
      schemas: {
        LineItem: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'amount'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 255 },
            amount: { type: 'integer', minimum: 0, description: 'Minor units.' },
          },
        },
        CreateOrder: {
          type: 'object',
          additionalProperties: false,
          required: ['amount', 'currency', 'reference'],
          properties: {
            amount: { type: 'integer', minimum: 1, maximum: 9007199254740991, description: 'Minor units; at most 999,999,999 major units of the currency.' },
            currency: { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217, uppercase.' },
            reference: { type: 'string', minLength: 1, maxLength: 255, description: 'Your reference; any Unicode, 1-255 characters.' },
            line_items: { type: 'array', maxItems: 100, items: { $ref: '#/components/schemas/LineItem' }, description: 'When given, the amounts must sum to amount.' },
            return_url: { type: 'string', format: 'uri', maxLength: 2048, description: 'Absolute http(s) URL.' },
            expires_at: { type: 'string', format: 'date-time', description: 'When the checkout closes: 5 minutes to 30 days ahead; 24 hours when omitted.' },
          },
        },
        PaymentAttempt: {
          type: 'object',
          required: ['id', 'method', 'route', 'status', 'decline_code', 'authentication', 'card_brand', 'card_last4', 'retry', 'created'],
          properties: {
            id: { type: 'string', pattern: '^att_' },
            method: { type: 'string', enum: ['card', 'wallet', 'bank_transfer'] },
            route: { type: 'string', description: 'Acquirer route, e.g. simulated_alpha, simulated_beta, virtual_iban.' },
            status: { type: 'string', enum: ['processing', 'requires_authentication', 'succeeded', 'failed'] },
            decline_code: { type: ['string', 'null'] },
            authentication: { type: 'string', enum: ['not_required', 'required', 'passed', 'failed', 'abandoned'] },
            card_brand: { type: ['string', 'null'] },
            card_last4: { type: ['string', 'null'] },
            retry: { type: 'boolean', description: 'True when this attempt retried a soft decline on the alternative route.' },
            created: { type: 'string', format: 'date-time' },
          },
        },
        Order: {
          type: 'object',
          required: ['id', 'object', 'reference', 'amount', 'currency', 'status', 'checkout_url', 'line_items', 'return_url', 'method', 'settlement', 'refunds', 'attempts', 'created', 'expires_at', 'livemode'],
          properties: {
            id: { type: 'string', pattern: '^ord_[0-9A-Za-z]{22,}$' },
            object: { const: 'order' },
            reference: { type: 'string' },
            amount: { type: 'integer' },
            currency: { type: 'string' },
            status: { type: 'string', enum: ['pending', 'failed', 'paid', 'expired'], description: 'failed is not final: the customer may pay until expires_at.' },
            checkout_url: { type: 'string', format: 'uri', description: '<checkout host>/c/<order id suffix>' },
            line_items: { type: 'array', items: { $ref: '#/components/schemas/LineItem' } },
            return_url: { type: ['string', 'null'] },
            method: { type: ['string', 'null'], description: 'Payment method, once paid.' },
            settlement: {
              oneOf: [
                { type: 'null' },
                { type: 'object', required: ['currency', 'amount'], properties: { currency: { type: 'string' }, amount: { type: 'integer' } } },
              ],
            },
            refunds: { type: 'array', items: { type: 'object' } },
            attempts: { type: 'array', items: { $ref: '#/components/schemas/PaymentAttempt' } },
            created: { type: 'string', format: 'date-time' },
            expires_at: { type: 'string', format: 'date-time' },
            livemode: { type: 'boolean' },
          },
        },
        CreateWebhookEndpoint: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: {
            url: { type: 'string', format: 'uri', description: 'https in live mode, never a private or loopback address there; test mode may use http://localhost.' },
            enabled_events: { type: 'array', items: { type: 'string' }, description: 'Event types, or ["*"] (the default) for all.' },
            description: { type: 'string', maxLength: 500 },
          },
        },
        UpdateWebhookEndpoint: {
          type: 'object',
          additionalProperties: false,
          properties: { url: { type: 'string', format: 'uri' }, enabled_events: { type: 'array', items: { type: 'string' } }, description: { type: 'string' }, disabled: { type: 'boolean' } },
        },
        WebhookEndpoint: {
          type: 'object',
          properties: {
            id: { type: 'string', pattern: '^we_' },
            object: { const: 'webhook_endpoint' },
            url: { type: ['string', 'null'] },
            enabled_events: { type: 'array', items: { type: 'string' } },
            description: { type: 'string' },
            status: { type: 'string', enum: ['enabled', 'disabled'] },
            disabled_reason: { type: ['string', 'null'], enum: ['by_merchant', 'no_url', 'failing', null] },
            is_default: { type: 'boolean' },
            livemode: { type: 'boolean' },
            created: { type: 'string', format: 'date-time' },
          },
        },
        WebhookEndpointWithSecret: {
          allOf: [{ $ref: '#/components/schemas/WebhookEndpoint' }, { type: 'object', properties: { secret: { type: 'string', pattern: '^whsec_' }, old_secret_expires_at: { type: ['string', 'null'], format: 'date-time' } } }],
        },
        Event: {
          type: 'object',
          properties: {
            id: { type: 'string', pattern: '^evt_' },
            object: { const: 'event' },
            type: { type: 'string' },
            created: { type: 'string', format: 'date-time' },
            livemode: { type: 'boolean' },
            order_id: { type: 'string' },
            reference: { type: 'string' },
            sequence: { type: 'integer', description: 'Per-order sequence number.' },
            data: { type: 'object' },
          },
        },
        DeliveryAttempt: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            object: { const: 'delivery_attempt' },
            event_id: { type: 'string' },
            endpoint_id: { type: 'string' },
            attempted_at: { type: 'string', format: 'date-time' },
            status_code: { type: ['integer', 'null'] },
            error: { type: ['string', 'null'] },
            duration_ms: { type: 'integer' },
            response_excerpt: { type: 'string', description: 'At most the first 1024 bytes of the response body (UTF-8, cut on a character boundary).' },
          },
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['type', 'code', 'message', 'request_id'],
              properties: {
                type: { type: 'string', enum: ['invalid_request_error', 'card_error', 'authentication_error', 'permission_error', 'idempotency_error', 'api_error'] },
                code: { type: 'string' },
                message: { type: 'string' },
                param: { type: 'string' },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
    },
  };
}
