/** Shared schema pieces of the HTTP API (TypeBox: one definition for validation, types, OpenAPI). */
import { Type } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'a code of the error table in the description of this document' }),
    message: Type.String(),
  },
  { additionalProperties: true },
);

/** The paging fields every list answer carries beside its items. */
export const Page = { total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() };

/** Offset paging of the lists that have totals: `limit` 1-200 (default 50), `offset` (default 0). */
export const OffsetPaging = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'items per page' }),
  offset: Type.Integer({ minimum: 0, default: 0, description: 'items to skip' }),
});

export const Timestamp = Type.String({ format: 'date-time' });
