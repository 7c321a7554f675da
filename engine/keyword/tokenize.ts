/**
 * Text to BM25 terms: NFKC, Unicode lowercasing, runs of letters and digits, English stop words
 * dropped, Porter stems. Documents and queries go through the same function, so any change here
 * changes every stored term: an index built before it must be rebuilt.
 */

// A word starts with a letter or digit; combining marks continue it (scripts like Devanagari
// write vowels as marks that NFKC does not compose away, and splitting there breaks words).
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const ASCII_WORD = /^[a-z]+$/;
const DIGIT = /^\p{N}$/u;

/** The usual English stop words, in their lowercased surface form (matched before stemming). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has ' +
    'have having he her here hers herself him himself his how if in into is it its itself just me ' +
    'more most my myself no nor not now of off on once only or other our ours ourselves out over own ' +
    'same she should so some such than that the their theirs them themselves then there these they ' +
    'this those through to too under until up very was we were what when where which while who whom ' +
    'why will with would you your yours yourself yourselves'
  ).split(' '),
);

export function tokenize(text: string): string[] {
  if (NON_ASCII.test(text)) text = text.normalize('NFKC');
  const words = text.toLowerCase().match(WORD);
  if (words === null) return [];
  const out: string[] = [];
  for (const w of words) {
    const t = termOf(w);
    if (t !== '') out.push(t);
  }
  return out;
}

/** The Porter (1980) stem of a lowercase a-z word, as in Martin Porter's reference C version. */
export function stem(word: string): string {
  return word.length <= 2 ? word : porter(word);
}

// Vocabularies are Zipfian: most words are repeats, so their terms are cached. Two generations
// keep the hot words when the cache turns over instead of emptying it.
const CACHE_GENERATION = 65_536;
let recent = new Map<string, string>();
let older = new Map<string, string>();

/** The term of one lowercase word, or '' when it is dropped. */
function termOf(word: string): string {
  let t = recent.get(word);
  if (t !== undefined) return t;
  // A match of 13+ characters is a slice that keeps the whole lowercased text alive; as a cache
  // key or an index term it would pin the document it came from.
  if (word.length >= 13) word = (' ' + word).slice(1);
  t = older.get(word) ?? computeTerm(word);
  if (recent.size >= CACHE_GENERATION) {
    older = recent;
    recent = new Map();
  }
  recent.set(word, t);
  return t;
}

function computeTerm(word: string): string {
  if (word.length === 1 || (word.length === 2 && word.codePointAt(0)! > 0xffff)) return DIGIT.test(word) ? word : '';
  if (STOP_WORDS.has(word)) return '';
  return ASCII_WORD.test(word) ? stem(word) : word;
}

// The reference algorithm over a buffer b[0..k], j marking the end of the stem under test.
let b = '';
let k = 0;
let j = 0;

function cons(i: number): boolean {
  switch (b.charCodeAt(i)) {
    case 97: // a
    case 101: // e
    case 105: // i
    case 111: // o
    case 117: // u
      return false;
    case 121: // y
      return i === 0 ? true : !cons(i - 1);
    default:
      return true;
  }
}

/** The number of vowel-consonant sequences in b[0..j]: [C](VC){m}[V]. */
function measure(): number {
  let n = 0;
  let i = 0;
  for (;;) {
    if (i > j) return n;
    if (!cons(i)) break;
    i++;
  }
  i++;
  for (;;) {
    for (;;) {
      if (i > j) return n;
      if (cons(i)) break;
      i++;
    }
    i++;
    n++;
    for (;;) {
      if (i > j) return n;
      if (!cons(i)) break;
      i++;
    }
    i++;
  }
}

function vowelInStem(): boolean {
  for (let i = 0; i <= j; i++) if (!cons(i)) return true;
  return false;
}

function doubleC(i: number): boolean {
  return i >= 1 && b.charCodeAt(i) === b.charCodeAt(i - 1) && cons(i);
}

/** consonant-vowel-consonant ending at i, the last not w, x or y: "hop" but not "snow". */
function cvc(i: number): boolean {
  if (i < 2 || !cons(i) || cons(i - 1) || !cons(i - 2)) return false;
  const c = b[i];
  return c !== 'w' && c !== 'x' && c !== 'y';
}

function ends(s: string): boolean {
  const start = k - s.length + 1;
  if (start < 0 || !b.startsWith(s, start)) return false;
  j = start - 1;
  return true;
}

function setTo(s: string): void {
  b = b.slice(0, j + 1) + s;
  k = j + s.length;
}

function replaceIfM(s: string): void {
  if (measure() > 0) setTo(s);
}

/** Plurals and -ed / -ing. */
function step1ab(): void {
  if (b[k] === 's') {
    if (ends('sses')) k -= 2;
    else if (ends('ies')) setTo('i');
    else if (b[k - 1] !== 's') k--;
  }
  if (ends('eed')) {
    if (measure() > 0) k--;
  } else if ((ends('ed') || ends('ing')) && vowelInStem()) {
    k = j;
    if (ends('at')) setTo('ate');
    else if (ends('bl')) setTo('ble');
    else if (ends('iz')) setTo('ize');
    else if (doubleC(k)) {
      k--;
      const c = b[k];
      if (c === 'l' || c === 's' || c === 'z') k++;
    } else if (measure() === 1 && cvc(k)) setTo('e');
  }
}

/** Terminal y to i when the stem has a vowel. */
function step1c(): void {
  if (ends('y') && vowelInStem()) {
    b = b.slice(0, k) + 'i' + b.slice(k + 1);
  }
}

// Suffix rules by the letter that selects them; the first suffix that matches ends the step
// whether or not its measure condition holds, as in the reference.
const STEP2: Record<string, [string, string][]> = {
  a: [['ational', 'ate'], ['tional', 'tion']],
  c: [['enci', 'ence'], ['anci', 'ance']],
  e: [['izer', 'ize']],
  l: [['bli', 'ble'], ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous']],
  o: [['ization', 'ize'], ['ation', 'ate'], ['ator', 'ate']],
  s: [['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous']],
  t: [['aliti', 'al'], ['iviti', 'ive'], ['biliti', 'ble']],
  g: [['logi', 'log']],
};
const STEP3: Record<string, [string, string][]> = {
  e: [['icate', 'ic'], ['ative', ''], ['alize', 'al']],
  i: [['iciti', 'ic']],
  l: [['ical', 'ic'], ['ful', '']],
  s: [['ness', '']],
};
const STEP4: Record<string, string[]> = {
  a: ['al'],
  c: ['ance', 'ence'],
  e: ['er'],
  i: ['ic'],
  l: ['able', 'ible'],
  n: ['ant', 'ement', 'ment', 'ent'],
  s: ['ism'],
  t: ['ate', 'iti'],
  u: ['ous'],
  v: ['ive'],
  z: ['ize'],
};

function applyRules(rules: [string, string][] | undefined): void {
  if (!rules) return;
  for (const [suffix, to] of rules) {
    if (ends(suffix)) {
      replaceIfM(to);
      return;
    }
  }
}

/** -ation, -ize, -ness... to -ate, -ize and no suffix, where the stem is long enough. */
function step4(): void {
  const c = b[k - 1];
  if (c === 'o') {
    // -ion only after s or t; -ou as in "homologou".
    const ion = ends('ion') && j >= 0 && (b[j] === 's' || b[j] === 't');
    if (!ion && !ends('ou')) return;
  } else {
    const list = c === undefined ? undefined : STEP4[c];
    if (!list || !list.some((s) => ends(s))) return;
  }
  if (measure() > 1) k = j;
}

/** A final -e, and -ll to -l, on long stems. */
function step5(): void {
  j = k;
  if (b[k] === 'e') {
    const a = measure();
    if (a > 1 || (a === 1 && !cvc(k - 1))) k--;
  }
  if (b[k] === 'l' && doubleC(k) && measure() > 1) k--;
}

function porter(word: string): string {
  b = word;
  k = word.length - 1;
  j = 0;
  step1ab();
  if (k > 0) {
    step1c();
    applyRules(STEP2[b[k - 1]]);
    applyRules(STEP3[b[k]]);
    step4();
    step5();
  }
  return b.slice(0, k + 1);
}
