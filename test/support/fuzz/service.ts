// `sable serve` for the fuzz test: a child process (a crash must not take the test down with it)
// whose stderr is kept (500s log their stack there), whose outbound connections are fenced to
// loopback (loopback-only.mjs), and whose every upstream default points at a closed local port.
import { join } from 'node:path';
import { serve, type Served } from '../serve.js';

export { adminKey as adminKeyOf } from '../serve.js';

const fence = join(__dirname, 'loopback-only.mjs');

/** Port 9 (discard) is closed here: calls to an upstream fail at once, as a real outage would. */
const NOWHERE = 'http://127.0.0.1:9';

const UPSTREAMS: Record<string, string> = {
  SABLE_OPENAI_URL: `${NOWHERE}/v1`,
  SABLE_COHERE_URL: NOWHERE,
  SABLE_EMBEDDINGS_COMPATIBLE_URL: `${NOWHERE}/v1`,
  SABLE_GCS_API_URL: NOWHERE,
  SABLE_GDRIVE_API_URL: `${NOWHERE}/`,
  SABLE_ATLASSIAN_API_URL: NOWHERE,
  SABLE_GITHUB_API_URL: NOWHERE,
  // Connections can be created (a consent URL is only a string); their token calls fail.
  SABLE_GOOGLE_CLIENT_ID: 'fuzz-google',
  SABLE_GOOGLE_CLIENT_SECRET: 'fuzz-google-secret',
  SABLE_GOOGLE_AUTHORIZE_URL: `${NOWHERE}/authorize`,
  SABLE_GOOGLE_TOKEN_URL: `${NOWHERE}/token`,
  SABLE_GOOGLE_USERINFO_URL: `${NOWHERE}/userinfo`,
  SABLE_GOOGLE_REVOKE_URL: `${NOWHERE}/revoke`,
  SABLE_ATLASSIAN_CLIENT_ID: 'fuzz-atlassian',
  SABLE_ATLASSIAN_CLIENT_SECRET: 'fuzz-atlassian-secret',
  SABLE_ATLASSIAN_AUTHORIZE_URL: `${NOWHERE}/authorize`,
  SABLE_ATLASSIAN_TOKEN_URL: `${NOWHERE}/token`,
  SABLE_ATLASSIAN_USERINFO_URL: `${NOWHERE}/me`,
  SABLE_EMBEDDINGS_RETRIES: '0',
  SABLE_EMBEDDINGS_TIMEOUT_MS: '5000',
};

export type FuzzedService = Served;

/** The one launcher (support/serve.ts) behind the fence, upstreams closed, stderr's last 256 KiB kept. */
export function startFuzzedService(dir: string, env: Record<string, string> = {}): Promise<FuzzedService> {
  return serve(dir, { ...UPSTREAMS, ...env }, { nodeArgs: ['--import', fence], stderrTail: 256 * 1024 });
}
