/**
 * `preview_ref`: an opaque, signed reference to the chunks a source showed, so a client can fetch
 * the preview later (GET /intelligence/previews/{ref}) without the service handing out storage
 * keys or object URLs. It names its organization and expires after 24 hours.
 */
import { SignedTokens } from './signed-tokens.js';

export interface PreviewTarget {
  org: string;
  dataset: string;
  document: string | null;
  ids: number[];
}

export class PreviewSigner extends SignedTokens<PreviewTarget> {
  constructor(masterKey: Buffer) {
    super(masterKey, 'sable preview references', 24 * 3600_000);
  }
}
