// Asks a running Laneway server for embeddings with the official OpenAI Node SDK, as the SDK asks by default
// (base64, which it decodes) and as floats. Usage: node openai-embeddings.mjs BASE_URL MODEL INPUTS_JSON
// Prints one JSON line: {"base64": [vectors], "float": [vectors], "usage": {...}}; exits non-zero, naming the
// check, when the server answers unlike OpenAI.
import OpenAI from 'openai';

const [baseURL, model, inputs] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: process.env.LANEWAY_API_KEY || 'unused', maxRetries: 0 });
const input = JSON.parse(inputs);

function check(condition, what) {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const byDefault = await client.embeddings.create({ model, input });
check(byDefault.object === 'list', 'a list');
check(byDefault.data.length === input.length, 'one embedding per input');
byDefault.data.forEach((e, i) => {
  check(e.object === 'embedding' && e.index === i, 'embedding objects in order');
  check(Array.isArray(e.embedding) && e.embedding.length > 0, 'decoded to numbers');
});
check(byDefault.usage.prompt_tokens > 0 && byDefault.usage.total_tokens === byDefault.usage.prompt_tokens,
  'usage counts the prompt tokens');
const floats = await client.embeddings.create({ model, input, encoding_format: 'float' });
console.log(JSON.stringify({ base64: byDefault.data.map(e => e.embedding), float: floats.data.map(e => e.embedding),
  usage: floats.usage }));
