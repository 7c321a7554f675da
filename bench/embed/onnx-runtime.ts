/**
 * onnxruntime-node for the embedding peer, installed on demand into bench/.cache/onnxruntime/
 * (git-ignored) and never a dependency: the engine must not pull a 290 MB runtime for a bench.
 *
 * 1.30.0: its npm tarball itself ships the CPU build for linux x64 (and arm64, darwin, win32):
 * bin/napi-v6/linux/x64/onnxruntime_binding.node + libonnxruntime.so.1, so --ignore-scripts
 * loses nothing (the postinstall only downloads CUDA / TensorRT extras, which this machine can't
 * fetch anyway). N-API 6: the same binary loads on Node 20, 22 and 24, so the one cache serves
 * every Node of a checkout; whether it does is checked in a probe process of the running Node
 * first (a failed or crashing dlopen stays there), and when it does not, or npm cannot fetch it,
 * loadOnnxRuntime throws one line, "onnxruntime skipped: ...", that the bench prints and reports.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { firstErrorLine, nodeLabel, probeLoad } from '../ann/env.js';
import { paths } from '../ann/paths.js';

export const ORT_VERSION = '1.30.0';
export const ORT_DIR = join(paths.cache, 'onnxruntime');

// The slice of the onnxruntime-node API used here: declared by hand because its typings are only
// there once the package is fetched, after tsc has run.
export interface OrtTensor {
  readonly dims: readonly number[];
  readonly data: unknown;
}
export interface OrtSession {
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}
export interface OrtSessionOptions {
  intraOpNumThreads?: number;
  interOpNumThreads?: number;
  executionMode?: 'sequential' | 'parallel';
  graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'all';
}
export interface Ort {
  Tensor: new (type: 'int64' | 'float32', data: BigInt64Array | Float32Array, dims: number[]) => OrtTensor;
  InferenceSession: { create(model: Uint8Array, options?: OrtSessionOptions): Promise<OrtSession> };
  env: { versions: Record<string, string> };
}

function installedVersion(): string | null {
  const pkg = join(ORT_DIR, 'node_modules', 'onnxruntime-node', 'package.json');
  if (!existsSync(pkg)) return null;
  return (createRequire(join(ORT_DIR, 'x.js'))('onnxruntime-node/package.json') as { version: string }).version;
}

let loaded: Ort | null = null;

/** Why the peer cannot run here, in one line; thrown by loadOnnxRuntime. */
export class OnnxRuntimeUnavailable extends Error {}

const PROBE = `const ort = require('onnxruntime-node');
if (typeof ort.InferenceSession?.create !== 'function') throw new Error('onnxruntime-node has no InferenceSession');`;

/** The runtime, fetched with npm the first time (about 5 s, 290 MB on disk). */
export function loadOnnxRuntime(log: (msg: string) => void = (m) => console.error(m)): Ort {
  if (loaded) return loaded;
  const unavailable = (why: string) => new OnnxRuntimeUnavailable(`onnxruntime skipped: ${why}`);
  if (installedVersion() !== ORT_VERSION) {
    mkdirSync(ORT_DIR, { recursive: true });
    log(`npm install onnxruntime-node@${ORT_VERSION} (once; cached in ${ORT_DIR})`);
    try {
      execFileSync(
        'npm',
        ['install', '--prefix', ORT_DIR, '--ignore-scripts', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `onnxruntime-node@${ORT_VERSION}`],
        // npm's chatter to stderr: a bench may print its results on stdout; its errors kept for the reason.
        { stdio: ['ignore', 2, 'pipe'], encoding: 'utf8' },
      );
    } catch (e) {
      const err = e as Error & { stderr?: string };
      if (err.stderr) process.stderr.write(err.stderr);
      throw unavailable(`npm install onnxruntime-node@${ORT_VERSION} failed: ${firstErrorLine(err.stderr || err.message)}`);
    }
    if (installedVersion() !== ORT_VERSION) throw unavailable(`npm did not install onnxruntime-node@${ORT_VERSION} into ${ORT_DIR}`);
  }
  const why = probeLoad(PROBE, ORT_DIR);
  if (why) throw unavailable(`onnxruntime-node ${ORT_VERSION} (prebuilt N-API binary only; no source build) does not load on ${nodeLabel()}: ${why}`);
  loaded = createRequire(join(ORT_DIR, 'x.js'))('onnxruntime-node') as Ort;
  return loaded;
}
