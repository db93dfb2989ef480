// Asks for a LoRA adapter by its model id with the official OpenAI Node SDK: the models list (the adapter with its
// base model as parent) and a greedy completion from it. Usage: node openai-lora.mjs BASE_URL ADAPTER PROMPT
// Prints one JSON line with what it saw; exits non-zero, naming the check, when the server answers unlike vLLM.
import OpenAI from 'openai';

const [baseURL, adapter, prompt] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });

function check(condition, what) {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const models = await client.models.list();
const listed = models.data.find(m => m.id === adapter);
check(listed !== undefined, 'the adapter is listed');
check(listed.object === 'model', 'as a model object');
const completion = await client.completions.create({ model: adapter, prompt, max_tokens: 24, temperature: 0 });
check(completion.object === 'text_completion', 'a text_completion');
check(completion.model === adapter, 'named after the adapter');
console.log(JSON.stringify({ ids: models.data.map(m => m.id), parent: listed.parent, text: completion.choices[0].text }));
