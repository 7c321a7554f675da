// What the run is measured on (commit, CPU, versions) and getting the peers ready: hnswlib-node's
// addon (npm 11 skips install scripts) built for the running Node, usearch's binary checked on
// it, and the FAISS harness (Debian's libfaiss-dev).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { ensureDir, paths } from './paths.js';

function log(msg: string): void {
  process.stderr.write(`[setup] ${msg}\n`);
}

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** The commit being measured (read-only git commands), "+dirty" when tracked files changed. */
export function gitCommit(): string {
  try {
    const head = execFileSync('git', ['-C', paths.root, 'rev-parse', '--short=12', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['-C', paths.root, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown (no commit yet)';
  }
}

export interface CpuInfo {
  model: string;
  cores: number;
  /** The x86 SIMD features that matter for distance kernels. */
  simd: string[];
}

export function cpuInfo(): CpuInfo {
  const list = cpus();
  let flags: string[] = [];
  try {
    const text = readFileSync('/proc/cpuinfo', 'utf8');
    const line = text.split('\n').find((l) => l.startsWith('flags') || l.startsWith('Features'));
    flags = line ? line.split(':')[1]!.trim().split(/\s+/) : [];
  } catch {
    // not Linux
  }
  const wanted = ['sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16', 'asimd', 'sve'];
  return { model: list[0]?.model ?? 'unknown', cores: list.length, simd: wanted.filter((f) => flags.includes(f)) };
}

/** "Node 24.21.0 (ABI 137)": the running Node as the peers' messages name it. */
export function nodeLabel(): string {
  return `Node ${process.versions.node} (ABI ${process.versions.modules})`;
}

function headersVersion(dir: string): string | null {
  const file = join(dir, 'include', 'node', 'node_version.h');
  if (!existsSync(file)) return null;
  const text = readFileSync(file, 'utf8');
  const part = (name: string) => new RegExp(`#define NODE_${name}_VERSION (\\d+)`).exec(text)?.[1];
  return `${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
}

/**
 * Node headers for node-gyp that match the running Node: the install prefix of process.execPath
 * when it carries include/node of the same version (official tarballs do, and Debian's nodejs with
 * libnode-dev under /usr), else node-gyp's own header cache for this version; null when neither
 * exists (npm's configured nodedir, or a header download, is then used). Never the npmrc's nodedir
 * blindly: /root/.npmrc points at /usr, Node 20's headers, whichever Node runs.
 */
export function nodeHeadersDir(): string | null {
  const candidates = [
    dirname(dirname(process.execPath)),
    join(homedir(), '.cache', 'node-gyp', process.versions.node),
  ];
  return candidates.find((d) => headersVersion(d) === process.versions.node) ?? null;
}

/**
 * The environment for `npm rebuild <peer>` so node-gyp builds for the running Node: its folder
 * first on PATH (npm, node-gyp and binding.gyp's `node -p ...` then run under it) and
 * npm_config_nodedir set to its headers (overriding the npmrc's).
 */
function rebuildEnv(): { env: NodeJS.ProcessEnv; headers: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
  const dir = nodeHeadersDir();
  if (dir) env.npm_config_nodedir = dir;
  return { env, headers: dir ?? `npm's configured nodedir (no headers for ${process.versions.node} found next to ${process.execPath})` };
}

/** One line out of an error message: ABI mismatches summarised, other text whitespace-collapsed. */
export function oneLine(message: string, max = 240): string {
  const abi = /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(message);
  if (abi) return `built for ABI ${abi[1]}, this Node needs ABI ${abi[2]} (NODE_MODULE_VERSION mismatch)`;
  const text = message.replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Load a peer in a fresh process of the running Node (a failed dlopen, or a crash, stays there;
 * this process never loads a binary for another ABI). The script runs as CommonJS in the repository
 * root and throws on failure. Returns null when it worked, else the reason in one line.
 */
export function probeLoad(script: string, cwd: string = paths.root): string | null {
  const wrapped = `try {\n${script}\n} catch (e) { process.stderr.write('PROBE-ERROR ' + JSON.stringify(String((e && e.message) || e)) + '\\n'); process.exit(1); }`;
  const r = spawnSync(process.execPath, ['-e', wrapped], { cwd, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status === 0) return null;
  const line = r.stderr.split('\n').find((l) => l.startsWith('PROBE-ERROR '));
  if (line) return oneLine(JSON.parse(line.slice('PROBE-ERROR '.length)) as string);
  const last = r.stderr.trim().split('\n').filter(Boolean).pop();
  return oneLine(`${r.signal ? `killed by ${r.signal}` : `exit ${r.status}`}${last ? `: ${last}` : ''}`);
}

/** The line of a failed build's or install's output that says why: the compiler's, else node-gyp's, else npm's. */
export function firstErrorLine(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter(Boolean);
  const pick =
    lines.find((l) => /\b(fatal )?error:/i.test(l) && !/^npm (ERR!|error)/.test(l)) ??
    lines.find((l) => /^gyp ERR! stack Error:/.test(l)) ??
    lines.find((l) => /^gyp ERR! /.test(l) && !/^gyp ERR! (stack|System|command|cwd|node -v|node-gyp -v|not ok)/.test(l)) ??
    lines.find((l) => /^npm (ERR!|error) /.test(l) && !/^npm (ERR!|error) (code|errno|syscall|path|dest|command|signal|A complete log|\s*at )/.test(l)) ??
    lines[lines.length - 1];
  return oneLine(pick ?? 'no output');
}

/** `npm rebuild <pkg>` for the running Node; null when it exited 0, else its first error line. */
function npmRebuild(pkg: string, extraEnv: NodeJS.ProcessEnv = {}): string | null {
  const { env, headers } = rebuildEnv();
  log(`building ${pkg} for ${nodeLabel()} against ${headers} (npm rebuild ${pkg}; npm 11 skips dependencies' install scripts)`);
  const r = spawnSync('npm', ['rebuild', pkg, '--foreground-scripts'], {
    cwd: paths.root,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 2 ** 20,
    timeout: 30 * 60_000,
  });
  if (r.status === 0) return null;
  const output = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
  process.stderr.write(output.trim().split('\n').slice(-15).map((l) => `[setup]   ${l}\n`).join(''));
  return `${firstErrorLine(output)}${r.error ? ` (${oneLine(r.error.message)})` : ''}`;
}

function buildToolsMissing(): string | null {
  const missing = ['g++', 'make', 'python3'].filter((c) => !has(c));
  return missing.length ? `${missing.join(', ')} missing` : null;
}

/** What an addon's build/config.gypi says it was built against: "Node 20.20.2 headers (ABI 115, /usr)". */
function builtAgainst(pkgDir: string): { abi: string; label: string } | null {
  try {
    const text = readFileSync(join(pkgDir, 'build', 'config.gypi'), 'utf8');
    const abi = /"node_module_version":\s*(\d+)/.exec(text)?.[1];
    const nodedir = /"nodedir":\s*"([^"]*)"/.exec(text)?.[1];
    if (!abi) return null;
    const version = nodedir ? headersVersion(nodedir) : null;
    return { abi, label: `${version ? `Node ${version}` : 'Node'} headers (ABI ${abi}${nodedir ? `, ${nodedir}` : ''})` };
  } catch {
    return null;
  }
}

/** What a peer's set-up found: a reason to skip it (null: it loads), and notes for the report. */
export interface PeerSetup {
  skip: string | null;
  notes: string[];
}

const HNSWLIB_PROBE = `const h = require('hnswlib-node');
const i = new h.HierarchicalNSW('l2', 4);
i.initIndex(4);
i.addPoint([1, 2, 3, 4], 0);
if (i.searchKnn([1, 2, 3, 4], 1).neighbors[0] !== 0) throw new Error('hnswlib-node answered wrongly');`;

/**
 * hnswlib-node ships sources only: build its addon (node-gyp, node-addon-api) for the running Node
 * when it is missing, when it does not load here (built for another ABI: NODE_MODULE_VERSION
 * mismatch, or broken), or when `rebuild` asks. An addon built under another Node that loads is
 * kept (it is N-API, ABI-stable) and said so in the notes; one that neither loads nor rebuilds is
 * skipped with the reason.
 */
export function ensureHnswlib(rebuild = false): PeerSetup {
  const notes: string[] = [];
  const pkgDir = join(paths.root, 'node_modules', 'hnswlib-node');
  const addon = join(pkgDir, 'build', 'Release', 'addon.node');
  const skip = (why: string): PeerSetup => {
    const reason = `hnswlib-node skipped on ${nodeLabel()}: ${why}`;
    log(reason);
    return { skip: reason, notes };
  };
  if (!existsSync(join(pkgDir, 'package.json'))) return skip('not installed (npm install)');
  let why: string | null = null;
  if (rebuild) why = 'a rebuild was asked for (--rebuild-peers)';
  else if (!existsSync(addon)) why = 'its addon is not built';
  else why = probeLoad(HNSWLIB_PROBE);
  if (why) {
    const tools = buildToolsMissing();
    if (tools) return skip(`${why}, and building it needs g++, make and python3 (${tools})`);
    log(`hnswlib-node on ${nodeLabel()}: ${why}; building it`);
    const failed = npmRebuild('hnswlib-node');
    if (failed) return skip(`${why}, and the build fails: ${failed}`);
    const still = probeLoad(HNSWLIB_PROBE);
    if (still) return skip(`rebuilt, but it does not load: ${still}`);
    notes.push(`hnswlib-node addon built by this run for ${nodeLabel()}${builtAgainst(pkgDir) ? ` against ${builtAgainst(pkgDir)!.label}` : ''}`);
    return { skip: null, notes };
  }
  const built = builtAgainst(pkgDir);
  if (built && built.abi !== process.versions.modules) {
    notes.push(`hnswlib-node addon was built against ${built.label}, not this Node's; it is N-API (ABI-stable) and loads on ${nodeLabel()} (--rebuild-peers rebuilds it for this Node)`);
  }
  return { skip: null, notes };
}

const USEARCH_PROBE = `const u = require('usearch');
const ix = new u.Index({ dimensions: 4, metric: u.MetricKind.L2sq, quantization: u.ScalarKind.F32, connectivity: 16, expansion_add: 64, expansion_search: 64, multi: false });
ix.add(new BigUint64Array([7n]), new Float32Array([1, 2, 3, 4]));
if (ix.search(new Float32Array([1, 2, 3, 4]), 1).keys[0] !== 7n) throw new Error('usearch answered wrongly');`;

/** usearch's prebuilt binaries for this platform and architecture (prebuilds/linux-x64/usearch.node, ...). */
function usearchPrebuilds(pkgDir: string): string[] {
  const dir = join(pkgDir, 'prebuilds');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => {
      const [platform, archs] = d.split('-');
      return platform === process.platform && (archs ?? '').split('+').includes(process.arch);
    })
    .flatMap((d) => readdirSync(join(dir, d)).filter((f) => f.endsWith('.node')).map((f) => join(dir, d, f)));
}

/**
 * usearch ships N-API prebuilds (prebuilds/<platform>-<arch>/usearch.node), found by
 * node-gyp-build, which prefers a source build in the package's build/Release/ when there is one.
 * When nothing loads on the running Node: a source build left by another Node that does not load
 * here is removed when the prebuild loads; otherwise usearch is built from source for this Node
 * (npm rebuild with build_from_source); when that fails too, it is skipped with both reasons.
 * A source build in use is always named in the notes (it is not the release binary).
 */
export function ensureUsearch(): PeerSetup {
  const notes: string[] = [];
  const pkgDir = join(paths.root, 'node_modules', 'usearch');
  const buildDir = join(pkgDir, 'build');
  const sourceBuilt = () => existsSync(join(buildDir, 'Release', 'usearch.node'));
  const skip = (why: string): PeerSetup => {
    const reason = `usearch skipped: ${why}`;
    log(reason);
    return { skip: reason, notes };
  };
  if (!existsSync(join(pkgDir, 'package.json'))) return skip('not installed (npm install)');
  let why = probeLoad(USEARCH_PROBE);
  if (why && sourceBuilt()) {
    // A build/ for another Node hides the prebuild from node-gyp-build: drop it if the prebuild loads.
    const prebuilt = usearchPrebuilds(pkgDir).find(
      (f) => probeLoad(`if (typeof require(${JSON.stringify(f)}).CompiledIndex !== 'function') throw new Error('no CompiledIndex');`) === null,
    );
    if (prebuilt) {
      const built = builtAgainst(pkgDir);
      log(`usearch's source build (${built?.label ?? 'unknown headers'}) does not load on ${nodeLabel()}: ${why}; removing ${buildDir} so the prebuilt binary is used`);
      rmSync(buildDir, { recursive: true, force: true });
      const after = probeLoad(USEARCH_PROBE);
      if (!after) {
        notes.push(`usearch: removed a source build in node_modules/usearch/build/ that did not load on ${nodeLabel()} (${why}); the prebuilt binary is used`);
        return { skip: null, notes };
      }
      why = after;
    }
  }
  if (why) {
    const noBinary = `no binary for ${nodeLabel()} loads (${why})`;
    const tools = buildToolsMissing();
    if (tools) return skip(`${noBinary}, and building it needs g++, make and python3 (${tools})`);
    log(`usearch does not load on ${nodeLabel()}: ${why}; building it from source`);
    const failed = npmRebuild('usearch', { npm_config_build_from_source: 'true' });
    if (failed) return skip(`${noBinary} and the build fails: ${failed}`);
    const still = probeLoad(USEARCH_PROBE);
    if (still) return skip(`${noBinary}; built from source, but it does not load: ${still}`);
    notes.push(`usearch built from source by this run for ${nodeLabel()}${builtAgainst(pkgDir) ? ` against ${builtAgainst(pkgDir)!.label}` : ''}, not the prebuilt binary`);
    return { skip: null, notes };
  }
  if (sourceBuilt()) {
    const built = builtAgainst(pkgDir);
    notes.push(`usearch loads from a source build in node_modules/usearch/build/ (against ${built?.label ?? 'unknown headers'}; N-API), not its prebuilt binary, on ${nodeLabel()}`);
  }
  return { skip: null, notes };
}

const FAISS_HEADER = '/usr/include/faiss/IndexHNSW.h';

/**
 * Compile the FAISS harness into bench/build/ (again when its source is newer). Installs
 * libfaiss-dev (and OpenBLAS for its k-means) with apt-get when allowed, running as root, and missing.
 */
export function ensureFaiss(install: boolean): string | null {
  if (!existsSync(FAISS_HEADER)) {
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!install || !root || !has('apt-get')) {
      return 'libfaiss-dev is not installed (apt-get install -y libfaiss-dev libopenblas0-openmp)';
    }
    log('installing libfaiss-dev and libopenblas0-openmp with apt-get (once; --no-install to skip)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    const r = spawnSync('apt-get', ['install', '-y', 'libfaiss-dev', 'libopenblas0-openmp'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (r.status !== 0 || !existsSync(FAISS_HEADER)) return `apt-get install libfaiss-dev failed (exit ${r.status})`;
  }
  if (!has('g++')) return 'g++ is missing (needed to compile bench/faiss/faiss_bench.cpp)';
  const bin = paths.faissBinary;
  if (existsSync(bin) && statSync(bin).mtimeMs >= statSync(paths.faissSource).mtimeMs) return null;
  ensureDir(paths.build);
  log(`compiling ${paths.faissSource} -> ${bin}`);
  const r = spawnSync('g++', ['-O2', '-std=c++17', '-fopenmp', paths.faissSource, '-o', bin, '-lfaiss', '-lblas', '-llapack'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) return `compiling the FAISS harness failed (exit ${r.status})`;
  return null;
}

/** Which BLAS the harness will load (libblas.so.3 is an alternatives link on Debian). */
export function blasInUse(): string {
  try {
    const out = execFileSync('ldd', [paths.faissBinary], { encoding: 'utf8' });
    if (/libopenblas/.test(out)) return 'OpenBLAS';
    if (/libblis/.test(out)) return 'BLIS';
    if (/libmkl/.test(out)) return 'MKL';
    return 'reference BLAS';
  } catch {
    return 'unknown';
  }
}

/** Compile the exact brute-force tool (bench/ann/groundtruth.cpp); null when g++ is missing or fails. */
export function ensureGroundTruthTool(): string | null {
  const bin = paths.gtBinary;
  if (existsSync(bin) && statSync(bin).mtimeMs >= statSync(paths.gtSource).mtimeMs) return bin;
  if (!has('g++') || !existsSync(paths.gtSource)) return null;
  ensureDir(paths.build);
  log(`compiling ${paths.gtSource} -> ${bin}`);
  const r = spawnSync('g++', ['-O3', '-march=native', '-fopenmp-simd', '-pthread', '-std=c++17', paths.gtSource, '-o', bin], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return r.status === 0 ? bin : null;
}

/**
 * LanceDB in a prefix of its own (bench/.cache/lancedb) with the Arrow its peer range allows:
 * installed once from the registry, then reused; skipped with the reason when that fails.
 */
export function ensureLancedb(prefix: string, version: string): PeerSetup {
  const pkg = join(prefix, 'node_modules', '@lancedb', 'lancedb', 'package.json');
  if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version === version) return { skip: null, notes: [] };
  ensureDir(prefix);
  if (!existsSync(join(prefix, 'package.json'))) writeFileSync(join(prefix, 'package.json'), '{"name":"bench-lancedb","private":true}\n');
  log(`installing @lancedb/lancedb ${version} with apache-arrow 18.1.0 into ${prefix}`);
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '-E', `@lancedb/lancedb@${version}`, 'apache-arrow@18.1.0'], { cwd: prefix, encoding: 'utf8' });
  if (r.status !== 0) {
    const reason = `lancedb skipped: npm install failed (${(r.stderr || r.stdout).trim().split('\n').pop()})`;
    log(reason);
    return { skip: reason, notes: [] };
  }
  return { skip: null, notes: [`lancedb: @lancedb/lancedb ${version} and apache-arrow 18.1.0 installed into ${prefix} (its peer range ends at Arrow 18.1; the project uses 21)`] };
}
