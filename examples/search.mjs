// Search by text with no setup: creates a dataset with the local embedding model, inserts a few
// texts (embedded by the service), and asks questions in plain words. The results carry the
// text they matched because the search asks for documents (`include_documents: true`).
//
//   npm start                    # in another terminal: the service on :8080
//   node examples/search.mjs ["your question"]
import { api, url } from './sable.mjs';

const question = process.argv[2] ?? 'how do I cook spaghetti?';
const texts = [
  'Boil pasta in plenty of salted water and stir it in the first minute.',
  'Deploy the app with cf push after logging in to the platform.',
  'A risotto wants its broth added one ladle at a time.',
  'Rotate the API keys every ninety days and revoke the old ones.',
  'Sourdough needs a starter fed twice a day for a week.',
];

const ds = await api('POST', '/datasets', { name: `example-search-${Date.now()}` });
await api('POST', `/datasets/${ds.id}/ensure-engine`);
const inserted = await api('POST', `/datasets/${ds.id}/insert`, {
  vectors: texts.map((text, i) => ({ id: `note-${i + 1}`, metadata: { text, topic: i % 2 ? 'ops' : 'kitchen' } })),
});
console.log(`dataset ${ds.id} (${ds.embedding.provider}/${ds.embedding.model}, ${ds.dim} dimensions): ${inserted.embedded} texts embedded`);

const found = await api('POST', `/datasets/${ds.id}/search`, { query_text: question, top_k: 3, include_documents: true });
console.log(`\n"${question}"`);
for (const r of found.results) console.log(`  ${r.score.toFixed(3)}  ${r.external_id}  ${r.doc_value}`);

const kitchen = await api('POST', `/datasets/${ds.id}/search`, { query_text: 'bread', top_k: 1, include_documents: true, filters: { topic: 'kitchen' } });
console.log(`\n"bread", only topic=kitchen:\n  ${kitchen.results[0].score.toFixed(3)}  ${kitchen.results[0].doc_value}`);
console.log(`\n(the dataset stays; delete it with: curl -X DELETE -H "X-API-Key: $KEY" ${url}/datasets/${ds.id})`);
