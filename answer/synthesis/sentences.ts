/**
 * Text to sentences, for picking the sentences that answer a question and for checking that a
 * cited sentence is in its source. Whitespace is normalised (chunks keep their line breaks), and a
 * citation marker after a sentence's full stop belongs to that sentence.
 */

/** Abbreviations whose full stop does not end a sentence. */
const ABBREVIATIONS = /\b(e\.g|i\.e|etc|vs|cf|dr|mr|mrs|ms|st|no|vol|fig|approx|incl|resp)\.$/i;
/** A name's initials: "J.H.M. Dassen", "Susan G. Kleinmann". */
const INITIAL = /(^|[\s.])[A-Z]\.$/;

/** Whether the full stop that ends `text` belongs to an abbreviation or an initial. */
function abbreviated(text: string): boolean {
  return ABBREVIATIONS.test(text) || INITIAL.test(text);
}

export function normalize(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Sentences of a chunk: paragraphs and list items first, then full stops followed by a capital. */
export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split(/\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)/)) {
    const flat = normalize(block);
    if (flat === '') continue;
    let start = 0;
    const re = /[.!?]+["')\]]*(?=\s+["'(\[]?[A-Z0-9])/g;
    for (let m = re.exec(flat); m !== null; m = re.exec(flat)) {
      const end = m.index + m[0].length;
      if (abbreviated(flat.slice(Math.max(0, m.index - 8), m.index + 1))) continue;
      out.push(flat.slice(start, end).trim());
      start = end;
    }
    const rest = flat.slice(start).trim();
    if (rest) out.push(rest);
  }
  return out;
}

/**
 * Splits a growing text (a model's stream) into finished sentences: `push` returns the sentences
 * completed by a delta (a sentence ends at a full stop, its markers and a space, or a line break),
 * `end` what is left.
 */
export class SentenceSplitter {
  private buffer = '';

  push(delta: string): string[] {
    this.buffer += delta;
    const out: string[] = [];
    const stop = /[.!?]["')]*(?=\s)|\n/g;
    let start = 0;
    for (let m = stop.exec(this.buffer); m !== null; m = stop.exec(this.buffer)) {
      let end = m.index + m[0].length;
      if (m[0] !== '\n' && abbreviated(this.buffer.slice(Math.max(0, m.index - 8), m.index + 1))) continue;
      if (m[0] !== '\n') {
        // Markers after the full stop belong to this sentence: wait until what follows is known.
        const rest = this.buffer.slice(end);
        const markers = /^(?:\s*\[\d+\])*/.exec(rest)![0];
        const after = rest.slice(markers.length);
        if (after.trim() === '' || /^\s*\[\d*$/.test(after)) break;
        end += markers.length;
        stop.lastIndex = end;
      }
      out.push(this.buffer.slice(start, end));
      start = end;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  end(): string {
    const rest = this.buffer;
    this.buffer = '';
    return rest;
  }
}
