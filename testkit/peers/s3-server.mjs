// A real S3-compatible server for the tests, run as its own process (as S3 is):
// @20minutes/s3rver (verifies SigV4 signatures, presigned expiry and signed headers) on
// 127.0.0.1, behind a front that refuses unsigned requests as S3 does (s3rver alone lets
// anonymous requests through). s3rver encrypts ListObjectsV2 continuation tokens with DES, which
// OpenSSL 3 keeps in its legacy provider: the parent starts this with --openssl-legacy-provider.
// Usage: node --openssl-legacy-provider s3-server.mjs DIRECTORY BUCKET...; prints the endpoint.
import { createServer } from 'node:http';
import S3rver from '@20minutes/s3rver';

const [directory, ...buckets] = process.argv.slice(2);
const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, vhostBuckets: false, configureBuckets: buckets.map((name) => ({ name })) });
await s3.run();
const handler = s3.callback();
const front = createServer((req, res) => {
  const q = new URL(req.url ?? '/', 'http://x').searchParams;
  if (!req.headers.authorization && !q.has('X-Amz-Signature')) {
    res.writeHead(403, { 'content-type': 'application/xml' });
    return res.end('<Error><Code>AccessDenied</Code></Error>');
  }
  handler(req, res);
});
front.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${front.address().port}`));
process.on('SIGTERM', () => process.exit(0));
