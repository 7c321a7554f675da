// One registry, one definition: every error code raised anywhere (TypeScript and the native
// core) is in errors/codes.ts and maps to a deliberate HTTP answer, never the generic 500; the
// engine's enumerations equal the native core's; only engine/native.ts loads the addon.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_ANSWERS, errorResponse } from '../../dist/control-plane/http/status.js';
import { COLUMN_TYPES, INDEX_TYPES, METRICS, PREDICATE_OPS } from '../../dist/engine/index.js';
import { native } from '../../dist/engine/native.js';
import { ERROR_CODES, SableError } from '../../dist/errors/codes.js';
import { FILE_ERROR_TYPES, JOB_ERROR_TYPES } from '../../dist/errors/job-errors.js';

const ROOT = join(__dirname, '..', '..');
const SOURCE_DIRS = ['errors', 'contract', 'engine', 'outbound', 'objects', 'catalog', 'retrieval', 'jobs', 'bulk', 'ingest', 'answer', 'cluster', 'control-plane', 'native/core', 'native/binding'];

function sources(exts: string[]): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (exts.some((e) => name.endsWith(e))) out.push({ path: relative(ROOT, p), text: readFileSync(p, 'utf8') });
    }
  };
  for (const d of SOURCE_DIRS) walk(join(ROOT, d));
  return out;
}

const codes = Object.keys(ERROR_CODES);

describe('the error registry', () => {
  it('holds every code the native core can raise', () => {
    expect(native.errorCodes().filter((c: string) => !codes.includes(c))).toEqual([]);
    // And the core raises nothing its own list lacks.
    const raised = new Set<string>();
    for (const { text } of sources(['.cpp', '.h'])) {
      // Lines of the X-macros that spell every code name `name` are not raise sites.
      const code = text.split('\n').filter((l) => !/#define|\\$/.test(l)).join('\n');
      for (const m of code.matchAll(/Code::([a-z_]+)/g)) raised.add(m[1]);
    }
    expect([...raised].filter((c) => !native.errorCodes().includes(c))).toEqual([]);
  });

  it('holds every code the TypeScript layers raise', () => {
    const raised = new Map<string, string>();
    const patterns = [/new SableError\(\s*'([a-z_]+)'/g, /(?<!typeof \S*)\.code === '([a-z_]+)'/g, /new FileError\(\s*'([a-z_]+)'/g, /failedFile\([^,]+, '([a-z_]+)'/g];
    for (const { path, text } of sources(['.ts'])) {
      for (const re of patterns) for (const m of text.matchAll(re)) raised.set(m[1], path);
    }
    expect(raised.size).toBeGreaterThan(10);
    const unknown = [...raised].filter(([c]) => !codes.includes(c) && !(c in FILE_ERROR_TYPES) && !(c in JOB_ERROR_TYPES));
    expect(unknown).toEqual([]);
  });

  it('holds no code that nothing raises (the OpenAPI document lists them)', () => {
    const text = sources(['.ts', '.cpp', '.h']).map((s) => s.text).join('\n');
    const helpers: Record<string, RegExp> = { invalid_request: /\bbadRequest\(/, invalid_argument: /\binvalid\(/, invalid_configuration: /\bconfigError\(/ };
    const unraised = codes.filter((c) => !(helpers[c]?.test(text) || new RegExp(`new SableError\\(\\s*'${c}'|Code::${c}\\b`).test(text)));
    expect(unraised).toEqual([]);
  });

  it('maps every code to a deliberate answer: its own status and message, never the generic 500', () => {
    for (const code of codes) {
      const answer = ERROR_ANSWERS[code as keyof typeof ERROR_ANSWERS];
      expect(answer, code).toBeDefined();
      const res = errorResponse(new SableError(code as never, `message of ${code}`));
      expect(res.status, code).toBe(answer.status);
      if (code === 'internal') continue;
      const body = JSON.parse(String(res.body));
      expect(body.error, code).toBe(answer.shown ?? code);
      expect(body.message, code).toBe(`message of ${code}`);
    }
    // Anything that is not a SableError is the generic 500, with no detail leaked.
    expect(JSON.parse(String(errorResponse(new TypeError('x is undefined')).body))).toEqual({ error: 'internal', message: 'internal error' });
  });

  it('a native error reaches HTTP with its code', () => {
    let caught: unknown;
    try {
      native.segmentCreate(0, 'l2');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(SableError);
    expect(errorResponse(caught).status).toBe(400);
  });
});

describe('enumerations are defined once', () => {
  it('the engine vocabulary equals the native core names', () => {
    const e = native.enumerations();
    expect([...e.metrics].sort()).toEqual([...METRICS].sort());
    expect([...e.indexTypes].sort()).toEqual([...INDEX_TYPES].sort());
    expect([...e.columnTypes].sort()).toEqual([...COLUMN_TYPES].sort());
    expect([...e.predicateOps].sort()).toEqual([...PREDICATE_OPS].sort());
  });

  it('only engine/native.ts loads the addon', () => {
    const loaders = sources(['.ts']).filter(({ text }) => /sable\.node/.test(text)).map((s) => s.path);
    expect(loaders).toEqual(['engine/native.ts']);
  });
});
