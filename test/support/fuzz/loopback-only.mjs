// Loaded into the fuzzed service (`node --import`): its connections may reach loopback only.
// Fuzzed bodies name hosts and URLs (source configs, previews, embedding providers); the test
// must never reach past 127.0.0.1, so anything else is refused here, before any DNS query, as a
// machine without a network would refuse it. Each refusal is logged for the report.
import dns from 'node:dns';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '::ffff:127.0.0.1']);
const allowed = (host) => LOOPBACK.has(String(host).toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(String(host));
const refused = (host, code) => {
  process.stderr.write(`sable-fuzz-fence: refused ${host}\n`);
  return Object.assign(new Error(`${code === 'ENOTFOUND' ? 'getaddrinfo' : 'connect'} ${code} ${host} (the fuzz test allows loopback only)`), { code, hostname: host });
};

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const opts = first !== null && typeof first === 'object' ? first : { port: first, host: typeof args[1] === 'string' ? args[1] : undefined };
  if (opts.path === undefined) {
    const host = opts.host ?? 'localhost';
    if (!allowed(host)) {
      const err = refused(host, net.isIP(host) ? 'ECONNREFUSED' : 'ENOTFOUND');
      process.nextTick(() => this.destroy(err));
      return this;
    }
  }
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  if (!allowed(host)) return process.nextTick(() => cb(refused(host, 'ENOTFOUND')));
  return lookup.call(this, host, options, callback);
};
const lookupAsync = dns.promises.lookup;
dns.promises.lookup = async function (host, options) {
  if (!allowed(host)) throw refused(host, 'ENOTFOUND');
  return lookupAsync.call(this, host, options);
};
syncBuiltinESMExports();
// Once per isolate (the service and each of its threads): the test checks the fence is in place.
process.stderr.write('sable-fuzz-fence: loaded\n');
