/**
 * The BERT WordPiece tokenizer of a Hugging Face `tokenizer.json` (BertNormalizer,
 * BertPreTokenizer, WordPiece model), as the `tokenizers` library applies it: clean the text,
 * space out CJK characters, strip accents and lowercase (when configured), split on whitespace
 * and around every punctuation character, then greedy longest-match word pieces.
 */
import { readFileSync } from 'node:fs';

interface TokenizerJson {
  normalizer?: { type: string; clean_text?: boolean; handle_chinese_chars?: boolean; strip_accents?: boolean | null; lowercase?: boolean };
  pre_tokenizer?: { type: string };
  model: { type: string; unk_token: string; continuing_subword_prefix: string; max_input_chars_per_word: number; vocab: Record<string, number> };
}

/** The word pieces of one text, with where each word starts (chunks break only between words). */
export interface Encoding {
  ids: number[];
  /** Index in `ids` of the first piece of each word. */
  wordStarts: number[];
}

const CONTROL = /\p{C}/u;
// Unicode White_Space (what the tokenizers library's char::is_whitespace tests).
const WHITE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
const MARK = /\p{Mn}/gu;
const PUNCT = /\p{P}/u;

function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

function isPunctuation(ch: string, cp: number): boolean {
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126) || PUNCT.test(ch);
}

export class WordPieceTokenizer {
  readonly clsId: number;
  readonly sepId: number;
  readonly unkId: number;
  private readonly vocab: Map<string, number>;
  private readonly prefix: string;
  private readonly maxWordChars: number;
  private readonly clean: boolean;
  private readonly chinese: boolean;
  private readonly stripAccents: boolean;
  private readonly lowercase: boolean;

  constructor(json: TokenizerJson) {
    if (json.model?.type !== 'WordPiece') throw new Error(`tokenizer model ${json.model?.type} is not WordPiece`);
    if (json.normalizer && json.normalizer.type !== 'BertNormalizer') throw new Error(`normalizer ${json.normalizer.type} is not supported`);
    if (json.pre_tokenizer && json.pre_tokenizer.type !== 'BertPreTokenizer') throw new Error(`pre-tokenizer ${json.pre_tokenizer.type} is not supported`);
    this.vocab = new Map(Object.entries(json.model.vocab));
    this.prefix = json.model.continuing_subword_prefix;
    this.maxWordChars = json.model.max_input_chars_per_word;
    const n = json.normalizer;
    this.clean = n?.clean_text ?? false;
    this.chinese = n?.handle_chinese_chars ?? false;
    this.lowercase = n?.lowercase ?? false;
    // BertNormalizer: strip_accents null follows lowercase.
    this.stripAccents = n ? (n.strip_accents ?? this.lowercase) : false;
    const id = (token: string) => {
      const v = this.vocab.get(token);
      if (v === undefined) throw new Error(`the vocabulary has no ${token}`);
      return v;
    };
    this.clsId = id('[CLS]');
    this.sepId = id('[SEP]');
    this.unkId = id(json.model.unk_token);
  }

  static fromFile(path: string): WordPieceTokenizer {
    return new WordPieceTokenizer(JSON.parse(readFileSync(path, 'utf8')) as TokenizerJson);
  }

  /** Word pieces of `text`, without [CLS] / [SEP]. */
  encode(text: string): Encoding {
    const ids: number[] = [];
    const wordStarts: number[] = [];
    for (const word of this.words(this.normalize(text))) {
      wordStarts.push(ids.length);
      this.pieces(word, ids);
    }
    return { ids, wordStarts };
  }

  private normalize(text: string): string {
    let out = '';
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (this.clean) {
        if (cp === 0 || cp === 0xfffd) continue;
        if (WHITE.test(ch)) {
          out += ' ';
          continue;
        }
        if (CONTROL.test(ch)) continue;
      }
      out += this.chinese && isCjk(cp) ? ` ${ch} ` : ch;
    }
    if (this.stripAccents) out = out.normalize('NFD').replace(MARK, '');
    if (this.lowercase) out = out.toLowerCase();
    return out;
  }

  /** Whitespace-separated words, each punctuation character a word of its own. */
  private *words(text: string): Generator<string> {
    let word = '';
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (WHITE.test(ch)) {
        if (word) yield word;
        word = '';
      } else if (isPunctuation(ch, cp)) {
        if (word) yield word;
        word = '';
        yield ch;
      } else {
        word += ch;
      }
    }
    if (word) yield word;
  }

  private pieces(word: string, out: number[]): void {
    const chars = [...word];
    if (chars.length > this.maxWordChars) {
      out.push(this.unkId);
      return;
    }
    const start = out.length;
    let begin = 0;
    while (begin < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (begin < end) {
        const piece = (begin > 0 ? this.prefix : '') + chars.slice(begin, end).join('');
        found = this.vocab.get(piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) {
        out.length = start;
        out.push(this.unkId);
        return;
      }
      out.push(found);
      begin = end;
    }
  }
}
