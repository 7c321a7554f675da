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

export const Timestamp = Type.String({ format: 'date-time' });
