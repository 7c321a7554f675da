// Asks a question with the typed client (`sable-retrieval/client`) and prints the answer as it
// streams, then its sources: a dataset is made from a few notes uploaded to a file_upload source
// (the job parses, chunks, embeds and indexes them), and the answer's stream resumes by itself if
// the connection drops.
//
//   npm start                                   # in another terminal: the service on :8080
//   node examples/ask.mjs ["question"]
import { SableApiError, SableClient } from 'sable-retrieval/client';
import { key, stop, url } from './sable.mjs';

const question = process.argv[2] ?? 'How many steps does the keeper climb?';
const NOTES = {
  'lighthouse.txt': 'The lighthouse keeper climbs 217 steps every evening to light the lamp. The lamp burns until dawn.',
  'bees.txt': 'Bees visit clover and lavender in the morning, and return to the hive before the rain.',
  'harbour.txt': 'The harbour crane lifts twelve containers an hour when the wind is calm.',
};

const client = new SableClient({ baseUrl: url, apiKey: key });
try {
  const dataset = await client.createDataset({ name: `ask-${Date.now()}` });
  await client.ensureEngine(dataset.id);
  const source = await client.createSource({ source_type: 'file_upload', name: `notes-${dataset.id.slice(0, 8)}`, config: {} });
  const files = Object.entries(NOTES).map(([name, text]) => ({ name, bytes: new TextEncoder().encode(text), contentType: 'text/plain' }));
  const job = await client.waitForJob((await client.upload(source.id, dataset.id, files)).job_id);
  console.log(`${files.length} notes uploaded to ${dataset.name}: job ${job.status}`);
  console.log(`Q: ${question}`);
  process.stdout.write('A: ');
  let sources = [];
  for await (const chunk of client.askStream({ query: question, dataset_ids: [dataset.id] })) {
    if (chunk.chunk_type === 'text') process.stdout.write(chunk.content);
    if (chunk.chunk_type === 'citation') sources = chunk.metadata.sources;
  }
  console.log();
  sources.forEach((s, i) => console.log(`  [${i + 1}] ${s.name} (relevance ${s.relevance})`));
  await client.deleteDataset(dataset.id);
} catch (e) {
  if (e instanceof SableApiError && e.status === 401) stop(`the service at ${url} refused the API key (${e.message}): set SABLE_API_KEY`);
  if (e instanceof TypeError && /fetch failed/.test(e.message)) stop(`no Sable service answers at ${url} (${e.cause?.code ?? e.message}): start one with \`npm start\`, or set SABLE_URL`);
  throw e;
}
