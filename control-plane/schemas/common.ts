/** Shared JSON-schema pieces. Schemas are the one source of request validation and OpenAPI. */
export const scalar = { type: ['string', 'number', 'boolean', 'null'] } as const;

export const schemaField = {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string' },
  },
} as const;

export const errorBody = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'string' }, message: { type: 'string' } },
} as const;
