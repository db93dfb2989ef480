// OpenAI's Responses API through the official OpenAI Node SDK: a response whole and streamed (the SDK's stream
// helper assembling the events), and a tool round trip (a function_call item, its function_call_output, the
// answer), once whole and once streamed.
// Usage: node openai-responses.mjs BASE_URL PROMPT CALLING_PROMPT ANSWERING_RESULT
// Prints one JSON line with what it saw; exits non-zero, naming the check, when the server answers unlike OpenAI.
import OpenAI from 'openai';

const [baseURL, prompt, calling, result] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });

function check(condition, what) {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const model = (await client.models.list()).data[0].id;
const seen = {};
const request = { model, instructions: 'Tell a story.', input: prompt, max_output_tokens: 16 };
const whole = await client.responses.create(request);
check(whole.id.startsWith('resp_') && whole.object === 'response', 'a response');
check(whole.output[0].type === 'message' && whole.output[0].id.startsWith('msg_'), 'its output is a message');
check(whole.usage.output_tokens > 0, 'output tokens are counted');
seen.whole = whole.output_text;

const events = [];
const stream = client.responses.stream(request);
stream.on('event', (e) => events.push(e.type));
const streamed = await stream.finalResponse();
check(events[0] === 'response.created' && events[events.length - 1] === 'response.completed', 'the stream');
check(events.includes('response.output_text.delta'), 'text comes in deltas');
seen.streamed = streamed.output_text;
seen.events = [...new Set(events)];

const tools = [{ type: 'function', name: 'get_weather', description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
for (const way of ['whole', 'streamed']) {
  const input = [{ role: 'user', content: calling }];
  const calls = { model, input, tools, temperature: 0, max_output_tokens: 100 };
  const first = way === 'streamed' ? await client.responses.stream(calls).finalResponse()
    : await client.responses.create(calls);
  const call = first.output.find((item) => item.type === 'function_call');
  check(call && call.name === 'get_weather' && JSON.parse(call.arguments).city === 'Paris', `a call (${way})`);
  input.push(...first.output);
  input.push({ type: 'function_call_output', call_id: call.call_id, output: result });
  const answer = await client.responses.create({ ...calls, input });
  check(!answer.output.some((item) => item.type === 'function_call'), `the model answers (${way})`);
  seen[way + 'Tool'] = { arguments: call.arguments, answer: answer.output_text };
}
console.log(JSON.stringify(seen));
