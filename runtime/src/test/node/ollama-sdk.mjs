// Ollama's API through the official Ollama JavaScript client: a chat whole and streamed (newline-delimited JSON),
// with a JSON schema as the format (or its refusal, by a model that cannot follow one), a tool round trip (the model calls a tool, its result goes back, the model
// answers), a generation, the model lists, and keep_alive: 0 closing the model, which the next request opens again.
// Usage: node ollama-sdk.mjs HOST PROMPT CALLING_PROMPT ANSWERING_RESULT JSON_PROMPT MODEL
// Prints one JSON line with what it saw; exits non-zero, naming the check, when the server answers unlike Ollama.
import { Ollama } from 'ollama';

const [host, prompt, calling, result, jsonPrompt, model] = process.argv.slice(2);
const client = new Ollama({ host });

function check(condition, what) {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const seen = {};
const named = `${model}:latest`;
const whole = await client.chat({ model: named, messages: [{ role: 'user', content: prompt }], stream: false,
  options: { temperature: 0, num_predict: 32 } });
check(whole.done === true && whole.message.role === 'assistant', 'a finished answer from the assistant');
check(['stop', 'length'].includes(whole.done_reason), 'a done reason');
check(whole.eval_count > 0 && whole.prompt_eval_count > 0, 'tokens are counted');
seen.whole = whole.message.content;

let streamed = '';
let parts = 0;
let last;
for await (const part of await client.chat({ model: named, messages: [{ role: 'user', content: prompt }],
  stream: true, options: { temperature: 0, num_predict: 32 } })) {
  streamed += part.message.content;
  parts++;
  last = part;
}
check(last.done === true && parts > 2, 'the stream comes in parts and ends done');
seen.streamed = streamed;
seen.parts = parts;

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
try {
  const formatted = await client.chat({ model, messages: [{ role: 'user', content: jsonPrompt }], format: schema,
    stream: false });
  seen.formatted = JSON.parse(formatted.message.content);
} catch (e) {
  check(e.name === 'ResponseError', 'a format the model cannot follow is refused as Ollama refuses');
  seen.formatError = e.error;
}

const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
for (const way of ['whole', 'streamed']) {
  const messages = [{ role: 'user', content: calling }];
  let first;
  if (way === 'streamed') {
    const calls = [];
    for await (const part of await client.chat({ model, messages, tools, stream: true })) {
      calls.push(...(part.message.tool_calls ?? []));
      first = { ...part, message: { ...part.message, tool_calls: calls } };
    }
  } else {
    first = await client.chat({ model, messages, tools, stream: false });
  }
  const call = first.message.tool_calls?.[0];
  check(call && call.function.name === 'get_weather' && call.function.arguments.city === 'Paris',
    `the model calls the tool with its arguments as an object (${way})`);
  messages.push(first.message);
  messages.push({ role: 'tool', content: result, tool_name: 'get_weather' });
  const answer = await client.chat({ model, messages, tools, stream: false });
  check(!answer.message.tool_calls?.length, `the model answers (${way})`);
  seen[way + 'Tool'] = { city: call.function.arguments.city, answer: answer.message.content };
}

const generated = await client.generate({ model, prompt, stream: false, options: { num_predict: 32 } });
check(generated.done === true, 'a finished generation');
seen.generated = generated.response;
let generatedStream = '';
for await (const part of await client.generate({ model, prompt, stream: true })) {
  generatedStream += part.response;
}
seen.generatedStream = generatedStream;

const tags = await client.list();
seen.tags = tags.models.map((m) => m.name);
check(tags.models[0].details.family && tags.models[0].digest.length === 64, 'a listed model has a family and a digest');
seen.psBefore = (await client.ps()).models.map((m) => m.name);
const shown = await client.show({ model });
check(shown.capabilities.includes('completion'), 'show says what the model can do');
seen.version = (await client.version()).version;

const unloaded = await client.generate({ model, prompt: '', keep_alive: 0 });
check(unloaded.done_reason === 'unload', 'an empty prompt with keep_alive 0 unloads');
// the model closes once no request uses it: a generation another client left running may end first
let open = (await client.ps()).models;
for (let i = 0; i < 100 && open.length > 0; i++) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  open = (await client.ps()).models;
}
seen.psAfterUnload = open.map((m) => m.name);
const again = await client.chat({ model, messages: [{ role: 'user', content: prompt }], stream: false });
seen.again = again.message.content;
seen.psAfterAgain = (await client.ps()).models.map((m) => m.name);

try {
  await client.chat({ model, messages: [{ role: 'user', content: prompt }], stream: false,
    options: { num_gpu: 3 } });
  check(false, 'an option this server cannot honour is refused');
} catch (e) {
  check(e.name === 'ResponseError' && e.status_code === 400, 'a refusal is a 400 the client reads');
  seen.error = e.error;
}
try {
  await client.pull({ model: 'llama3' });
  check(false, 'pull is refused');
} catch (e) {
  seen.pullStatus = e.status_code;
  seen.pullError = e.error;
}
console.log(JSON.stringify(seen));
