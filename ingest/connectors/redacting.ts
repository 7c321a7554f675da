/**
 * Connectors whose failures never carry the source's credentials. Outside services quote what
 * they refused (an S3-compatible server the signature line with the access key id, a proxy the
 * Authorization header, an API the token it did not accept), and connectors pass their words on:
 * into job and document errors that are stored, answered by the API and logged. So every error
 * a connector throws, and the error of an item it describes, has each spelling of the source's
 * credentials cut out: the secret fields of its config (and the strings inside JSON ones), the
 * Basic header of a username and token, and the tokens of the connection it reads through.
 */
import { redact } from '../../outbound/messages.js';
import { secretFields } from '../sources/types.js';
import type { Connector, ConnectorContext, Connectors } from './connector.js';

/** The current tokens of a connection (none when it has no grant). */
export type ConnectionSecrets = (orgId: string, connectionId: string) => string[];

/** Shorter values would cut ordinary words out of messages; no credential is that short. */
const MIN_LENGTH = 6;
/** Members of a JSON credential (a service account key, OAuth credentials) that are secret. */
const SECRET_MEMBER = /key|secret|token|password/i;

export function redacting(connectors: Connectors, connectionSecrets: ConnectionSecrets): Connectors {
  return Object.fromEntries(Object.entries(connectors).map(([type, c]) => [type, wrap(c, connectionSecrets)])) as unknown as Connectors;
}

/** Every spelling of the credentials in a source's (revealed) config, longest first. */
export function credentialForms(c: Connector, ctx: ConnectorContext, connectionSecrets: ConnectionSecrets): string[] {
  const config = ctx.config;
  const forms: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string') {
      forms.push(v);
      // A JSON key file: its secret members (not its type, email or URLs, which messages name).
      if (v.trimStart().startsWith('{')) {
        try {
          add(JSON.parse(v));
        } catch {
          // Not JSON after all: the whole value is enough.
        }
      }
      // A PEM body may be quoted a line at a time.
      if (v.includes('\n')) for (const line of v.split('\n')) if (!line.startsWith('-----')) forms.push(line.trim());
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) if (SECRET_MEMBER.test(k)) add(x);
    }
  };
  for (const field of secretFields(c.type)) add(config[field]);
  if (typeof config.username === 'string' && typeof config.api_token === 'string') {
    const pair = `${config.username}:${config.api_token}`;
    forms.push(pair, Buffer.from(pair).toString('base64'));
  }
  if (typeof config.connection_id === 'string') {
    try {
      forms.push(...connectionSecrets(ctx.orgId, config.connection_id));
    } catch {
      // A connection that cannot be read has no token to leak.
    }
  }
  return [...new Set(forms.filter((f) => f.length >= MIN_LENGTH))].sort((a, b) => b.length - a.length);
}

function scrub(text: string, forms: string[]): string {
  return forms.reduce((t, f) => redact(t, f), text);
}

/** The error with its message (and the stack, which repeats it and is what the log prints) scrubbed. */
function scrubbed(e: unknown, forms: () => string[]): unknown {
  if (typeof e === 'string') return scrub(e, forms());
  if (!(e instanceof Error)) return e;
  const f = forms();
  e.message = scrub(e.message, f);
  if (typeof e.stack === 'string') e.stack = scrub(e.stack, f);
  return e;
}

function wrap(c: Connector, connectionSecrets: ConnectionSecrets): Connector {
  const forms = (ctx: ConnectorContext) => () => credentialForms(c, ctx, connectionSecrets);
  const guarded = <A extends unknown[], R>(fn: (ctx: ConnectorContext, ...rest: A) => Promise<R>) =>
    async (ctx: ConnectorContext, ...rest: A): Promise<R> => {
      try {
        return await fn.call(c, ctx, ...rest);
      } catch (e) {
        throw scrubbed(e, forms(ctx));
      }
    };
  return new Proxy(c, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      if (prop === 'list') {
        return (ctx: ConnectorContext) =>
          (async function* () {
            try {
              yield* target.list(ctx);
            } catch (e) {
              throw scrubbed(e, forms(ctx));
            }
          })();
      }
      if (prop === 'describe') {
        const describe = guarded(target.describe!);
        return async (ctx: ConnectorContext, uri: URL) => {
          const info = await describe(ctx, uri);
          return info.error === undefined ? info : { ...info, error: scrub(info.error, forms(ctx)()) };
        };
      }
      if (prop === 'fetch' || prop === 'validate' || prop === 'stream') return guarded(v as (ctx: ConnectorContext, ...rest: unknown[]) => Promise<unknown>);
      return (v as (...args: unknown[]) => unknown).bind(target);
    },
  });
}
