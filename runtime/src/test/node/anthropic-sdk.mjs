// Anthropic's Messages API through the official Anthropic Node SDK: a message whole and streamed (the SDK's stream
// helper assembling the events), the prompt's tokens counted, and a tool round trip (the model calls a tool, its
// result goes back, the model answers), once whole and once streamed.
// Usage: node anthropic-sdk.mjs BASE_URL PROMPT CALLING_PROMPT ANSWERING_RESULT MODEL
// Prints one JSON line with what it saw; exits non-zero, naming the check, when the server answers unlike Anthropic.
import Anthropic from '@anthropic-ai/sdk';

const [baseURL, prompt, calling, result, model] = process.argv.slice(2);
const client = new Anthropic({ baseURL, apiKey: 'unused', maxRetries: 0 });

function check(condition, what) {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const seen = {};
const whole = await client.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: prompt }] });
check(whole.type === 'message' && whole.role === 'assistant', 'a message from the assistant');
check(whole.content[0].type === 'text', 'its first block is text');
check(['end_turn', 'max_tokens'].includes(whole.stop_reason), 'a stop reason');
check(whole.usage.output_tokens > 0, 'output tokens are counted');
seen.whole = whole.content[0].text;

const events = [];
const stream = client.messages.stream({ model, max_tokens: 16, messages: [{ role: 'user', content: prompt }] });
stream.on('streamEvent', (e) => events.push(e.type));
const streamed = await stream.finalMessage();
check(events[0] === 'message_start' && events[events.length - 1] === 'message_stop', 'the stream opens and closes');
check(events.includes('content_block_delta'), 'text comes in deltas');
seen.streamed = streamed.content[0].text;
seen.events = [...new Set(events)];

const counted = await client.messages.countTokens({ model, messages: [{ role: 'user', content: prompt }] });
check(counted.input_tokens > 0, 'count_tokens counts');
seen.inputTokens = counted.input_tokens;

const tools = [{ name: 'get_weather', description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
for (const way of ['whole', 'streamed']) {
  const messages = [{ role: 'user', content: calling }];
  const request = { model, max_tokens: 100, messages, tools, temperature: 0 };
  const first = way === 'streamed' ? await client.messages.stream(request).finalMessage()
    : await client.messages.create(request);
  check(first.stop_reason === 'tool_use', `the model calls a tool (${way})`);
  const call = first.content.find((b) => b.type === 'tool_use');
  check(call && call.name === 'get_weather' && call.input.city === 'Paris', `the call and its input (${way})`);
  messages.push({ role: 'assistant', content: first.content });
  messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: result }] });
  const answer = await client.messages.create({ ...request, messages });
  check(answer.stop_reason !== 'tool_use' && answer.content[0].type === 'text', `the model answers (${way})`);
  seen[way + 'Tool'] = { input: call.input, answer: answer.content[0].text };
}

try {
  await client.messages.create({ model, max_tokens: 16, messages: [{ role: 'robot', content: 'x' }] });
  check(false, 'a bad role is refused');
} catch (e) {
  check(e instanceof Anthropic.BadRequestError, 'a bad request is a 400 the SDK reads');
  check(e.error?.type === 'error' && e.error?.error?.type === 'invalid_request_error', 'in Anthropic\'s shape');
  seen.error = e.error.error.message;
}
console.log(JSON.stringify(seen));
