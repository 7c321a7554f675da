// What every example shares: where the service is (SABLE_URL, default http://127.0.0.1:8080),
// the API key (SABLE_API_KEY, default the admin key a first `npm start` wrote to
// ./.sable-data/admin.key), and a JSON call that fails with the service's own message. When
// the service is not there, the example stops with one line that says what to do.
import { existsSync, readFileSync } from 'node:fs';

export const url = (process.env.SABLE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');

/** Prints one line to stderr and exits 1: for what the user can fix. */
export function stop(message) {
  console.error(message);
  process.exit(1);
}

function apiKey() {
  if (process.env.SABLE_API_KEY) return process.env.SABLE_API_KEY;
  const file = '.sable-data/admin.key';
  if (!existsSync(file)) stop(`no ${file} here: run this from the directory where \`npm start\` runs, or set SABLE_API_KEY`);
  return readFileSync(file, 'utf8').trim();
}

export const key = apiKey();

/** One call to the API; resolves with the parsed answer (null for 204), throws its error message. */
export async function api(method, path, body) {
  let res;
  try {
    res = await fetch(url + path, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    stop(`no Sable service answers at ${url} (${e.cause?.code ?? e.message}): start one with \`npm start\`, or set SABLE_URL`);
  }
  const text = await res.text();
  const out = text ? JSON.parse(text) : null;
  if (res.status === 401) stop(`the service at ${url} refused the API key (${out?.message}): set SABLE_API_KEY`);
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${out?.error}: ${out?.message}`);
  return out;
}
