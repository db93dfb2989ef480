// A tool-calling conversation through the official OpenAI Node SDK: the model calls a tool, the tool's result goes
// back, the model answers; once whole and once streamed (the calls reassembled from the deltas by the SDK's stream
// helper). Usage: node openai-tools.mjs BASE_URL CALLING_PROMPT ANSWERING_RESULT [OPTIONS_JSON]
// OPTIONS_JSON: {"toolChoice": the calling request's tool_choice, "answerToolChoice": the answering request's,
// "cities": an enum for the city argument, "maxTokens": max_tokens for each request}.
// Prints one JSON line with what it saw; exits non-zero, naming the check, when the server answers unlike OpenAI.
import OpenAI from 'openai';

const [baseURL, calling, result, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson ?? '{}');
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });

function check(condition, what) {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: options.cities ? { enum: options.cities } : { type: 'string' } },
    required: ['city'] } } }];
const model = (await client.models.list()).data[0].id;
const seen = {};

for (const streamed of [false, true]) {
  const messages = [{ role: 'user', content: calling }];
  const request = { model, messages, tools, temperature: 0 };
  if (options.toolChoice) request.tool_choice = options.toolChoice;
  if (options.maxTokens) request.max_tokens = options.maxTokens;
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
  const answering = { ...request, messages };
  if (options.answerToolChoice) answering.tool_choice = options.answerToolChoice;
  const answer = await client.chat.completions.create(answering);
  check(['stop', 'length'].includes(answer.choices[0].finish_reason), 'the model answers after the result');
  check(!answer.choices[0].message.tool_calls, 'without another call');
  seen[streamed ? 'streamed' : 'whole'] = { call: call.function, answer: answer.choices[0].message.content };
}
console.log(JSON.stringify(seen));
