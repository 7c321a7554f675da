/** The contract's list paging: `limit` 1-200 (default 50) and `offset` (default 0) from the query. */
import { badRequest } from '../../errors/codes.js';

export function pageOf(query: URLSearchParams): { limit: number; offset: number } {
  const limit = query.get('limit') === null ? 50 : Number(query.get('limit'));
  const offset = query.get('offset') === null ? 0 : Number(query.get('offset'));
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw badRequest('limit must be an integer from 1 to 200');
  if (!Number.isInteger(offset) || offset < 0) throw badRequest('offset must be a non-negative integer');
  return { limit, offset };
}
