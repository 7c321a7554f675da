// A real S3-compatible server for the tests, run as its own process (as S3 is):
// @20minutes/s3rver (verifies SigV4 signatures, presigned expiry and signed headers) on
// 127.0.0.1, behind a front that refuses unsigned requests as S3 does (s3rver alone lets
// anonymous requests through). s3rver encrypts ListObjectsV2 continuation tokens with DES, which
// OpenSSL 3 keeps in its legacy provider: the parent starts this with --openssl-legacy-provider.
// Usage: node --openssl-legacy-provider s3-server.mjs DIRECTORY BUCKET...; prints the endpoint.
// s3rver lacks AbortMultipartUpload and ListMultipartUploads: a middleware answers both, placed
// before s3rver's router so s3rver's own signature check runs first (the router then rejects the
// call as MethodNotAllowed / NotImplemented, and that rejection is replaced by the answer).
import { readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import S3rver from '@20minutes/s3rver';

const [directory, ...buckets] = process.argv.slice(2);
const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, vhostBuckets: false, configureBuckets: buckets.map((name) => ({ name })) });
// Where s3rver keeps a bucket's multipart uploads: one directory per upload ID, its key in a file.
const uploadsOf = (bucket) => join(directory, bucket, '._S3rver_uploads');
const multipartCalls = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    const [, bucket, ...key] = ctx.path.split('/').map(decodeURIComponent);
    if (ctx.method === 'DELETE' && 'uploadId' in ctx.query && key.length && err.code === 'MethodNotAllowed') {
      const dir = join(uploadsOf(bucket), String(ctx.query.uploadId).replace(/[^0-9a-f]/g, ''));
      const stored = await readFile(join(dir, 'key'), 'utf8').catch(() => null);
      if (stored !== key.join('/')) {
        ctx.status = 404;
        ctx.body = { Error: { Code: 'NoSuchUpload', Message: 'The specified upload does not exist.' } };
        return;
      }
      await rm(dir, { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    if (ctx.method === 'GET' && 'uploads' in ctx.query && !key.length && err.code === 'NotImplemented') {
      const ids = await readdir(uploadsOf(bucket)).catch(() => []);
      const uploads = await Promise.all(ids.map(async (id) => ({ Key: await readFile(join(uploadsOf(bucket), id, 'key'), 'utf8').catch(() => ''), UploadId: id })));
      ctx.body = { ListMultipartUploadsResult: { Bucket: bucket, IsTruncated: false, ...(uploads.length ? { Upload: uploads } : {}) } };
      return;
    }
    throw err;
  }
};
s3.middleware.splice(s3.middleware.length - 1, 0, multipartCalls);
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
