// A tool-calling conversation through the official OpenAI Node SDK: the model calls a tool, the tool's result goes
// back, the model answers; once whole and once streamed (the calls reassembled from the deltas by the SDK's stream
// helper). Usage: node openai-tools.mjs BASE_URL CALLING_PROMPT ANSWERING_RESULT
// Prints one JSON line with what it saw; exits non-zero, naming the check, when the server answers unlike OpenAI.
import OpenAI from 'openai';

const [baseURL, calling, result] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });

function check(condition, what) {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
const model = (await client.models.list()).data[0].id;
const seen = {};

for (const streamed of [false, true]) {
  const messages = [{ role: 'user', content: calling }];
  const request = { model, messages, tools, temperature: 0 };
  const first = streamed
    ? await client.chat.completions.stream(request).finalChatCompletion()
    : await client.chat.completions.create(request);
  const choice = first.choices[0];
  const call = choice.message.tool_calls?.[0];
  check(choice.finish_reason === 'tool_calls', `the model calls a tool (streamed: ${streamed})`);
  check(call && call.type === 'function' && call.function.name === 'get_weather', 'the call names the function');
  check(JSON.parse(call.function.arguments).city === 'Paris', 'its arguments are JSON text');
  messages.push(choice.message);
  messages.push({ role: 'tool', tool_call_id: call.id, content: result });
  const answer = await client.chat.completions.create({ ...request, messages });
  check(answer.choices[0].finish_reason === 'stop', 'the model answers after the result');
  check(!answer.choices[0].message.tool_calls, 'without another call');
  seen[streamed ? 'streamed' : 'whole'] = { call: call.function, answer: answer.choices[0].message.content };
}
console.log(JSON.stringify(seen));
