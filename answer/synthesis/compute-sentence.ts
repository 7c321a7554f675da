/**
 * An aggregate in words, as the trace, the table artifact and the answer say it: "The average
 * price over 4 matching records of products is 9.5. By category: ...".
 */
import type { ComputeResult } from '../tools/compute.js';

const OP_WORDS = { sum: 'total', avg: 'average', min: 'minimum', max: 'maximum' } as const;

export function computeSentence(r: ComputeResult, dataset: string): string {
  const of = r.field ? ` ${r.field}` : '';
  const scope = `${r.rows} matching record${r.rows === 1 ? '' : 's'} of ${dataset}${r.truncated ? ' (the first ones read; more exist)' : ''}`;
  const head =
    r.op === 'count'
      ? `${dataset} has ${r.rows}${r.truncated ? '+' : ''} matching record${r.rows === 1 ? '' : 's'}.`
      : r.value === null
        ? `No value of${of} was found over ${scope}.`
        : `The ${OP_WORDS[r.op]}${of} over ${scope} is ${r.value}.`;
  if (!r.groups) return head;
  return `${head} By ${r.group_by}: ${r.groups.map((g) => `${g.key} ${g.value ?? 'n/a'}${r.op === 'count' ? '' : ` (${g.rows})`}`).join(', ')}.`;
}
