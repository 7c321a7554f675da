/**
 * Stream tokens: a browser's EventSource cannot send an API key header, and a long-lived key in a
 * URL ends up in logs and histories. An authenticated call mints a token for one run of one
 * organization, valid 10 minutes, which the read-only run routes take as `stream_token`.
 */
import { SignedTokens } from '../signed-tokens.js';

export interface StreamGrant {
  org: string;
  run: string;
}

export const STREAM_TOKEN_MINUTES = 10;

export class StreamTokens extends SignedTokens<StreamGrant> {
  constructor(masterKey: Buffer) {
    super(masterKey, 'sable run stream tokens', STREAM_TOKEN_MINUTES * 60_000);
  }

  /** The organization a token grants this run to, or null. */
  orgFor(token: string, runId: string): string | null {
    const g = this.open(token);
    return g !== null && g.run === runId ? g.org : null;
  }
}
