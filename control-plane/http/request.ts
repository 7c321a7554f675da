/** What both adapters' requests share: the fields routes read, the query parsed only when asked. */
import type { Readable } from 'node:stream';
import type { Request } from './types.js';

export const EMPTY_BODY = Buffer.alloc(0);

export abstract class AdapterRequest implements Request {
  body: Buffer = EMPTY_BODY;
  stream?: Readable;
  readonly startedAt = process.hrtime.bigint();
  private parsedQuery?: URLSearchParams;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly rawQuery: string,
    readonly headers: Record<string, string>,
  ) {}

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }

  /** Aborts when the client goes away before the answer is complete (made when a route asks). */
  abstract get signal(): AbortSignal;
}
