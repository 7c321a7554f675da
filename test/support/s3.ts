// A real S3-compatible server for the tests (@20minutes/s3rver: verifies SigV4 signatures,
// presigned expiry and signed headers) on 127.0.0.1, behind a front that refuses unsigned
// requests as S3 does (s3rver alone lets anonymous requests through).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: the package ships no types
import S3rver from '@20minutes/s3rver';

export const S3_KEY = 'S3RVER'; // s3rver's built-in account
export const S3_SECRET = 'S3RVER';

export interface LocalS3 {
  endpoint: string;
  directory: string;
  stop(): Promise<void>;
}

export async function startS3(bucket: string): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'sable-s3-'));
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, vhostBuckets: false, configureBuckets: [{ name: bucket }] });
  await s3.run();
  const handler = s3.callback();
  const front: Server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    if (!req.headers.authorization && !q.has('X-Amz-Signature')) {
      res.writeHead(403, { 'content-type': 'application/xml' });
      return res.end('<Error><Code>AccessDenied</Code></Error>');
    }
    handler(req, res);
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    directory,
    async stop() {
      front.closeAllConnections();
      await new Promise((r) => front.close(r));
      await s3.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
