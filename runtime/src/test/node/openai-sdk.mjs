// Drives a running Laneway server with the official OpenAI Node SDK: the models list, a chat completion, a streamed
// chat completion with usage, and an error. Usage: node openai-sdk.mjs BASE_URL PROMPT
// Prints one JSON line with what it saw; exits non-zero, naming the check, when the server answers unlike OpenAI.
import OpenAI from 'openai';

const [baseURL, prompt] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: process.env.LANEWAY_API_KEY || 'unused', maxRetries: 0 });

function check(condition, what) {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const models = await client.models.list();
check(models.data.length === 1, 'one model is listed');
const model = models.data[0].id;
check(models.data[0].object === 'model', 'a model object');

const request = { model, messages: [{ role: 'user', content: prompt }], max_tokens: 16, temperature: 0 };
const chat = await client.chat.completions.create(request);
const message = chat.choices[0].message;
check(chat.object === 'chat.completion', 'a chat.completion');
check(message.role === 'assistant', 'the assistant answers');
check(typeof message.content === 'string' && message.content.length > 0, 'with some text');
check(chat.usage.completion_tokens >= 1 && chat.usage.completion_tokens <= 16, 'usage counts the tokens');
check(chat.usage.total_tokens === chat.usage.prompt_tokens + chat.usage.completion_tokens, 'usage adds up');

const stream = await client.chat.completions.create({ ...request, stream: true,
  stream_options: { include_usage: true } });
let streamed = '';
let usage = null;
let finish = null;
let role = null;
for await (const chunk of stream) {
  check(chunk.object === 'chat.completion.chunk', 'chunks are chat.completion.chunk');
  if (chunk.usage) {
    usage = chunk.usage;
  }
  for (const choice of chunk.choices) {
    role = role ?? choice.delta.role ?? null;
    streamed += choice.delta.content ?? '';
    finish = choice.finish_reason ?? finish;
  }
}
check(role === 'assistant', 'the stream names the role');
check(streamed === message.content, 'the streamed text equals the whole one');
check(finish === chat.choices[0].finish_reason, 'the stream ends the same way');
check(usage !== null && usage.completion_tokens === chat.usage.completion_tokens, 'the stream ends with the usage');

let error = null;
try {
  await client.chat.completions.create({ ...request, temperature: -1 });
} catch (e) {
  error = e;
}
check(error instanceof OpenAI.BadRequestError, 'a bad request is a BadRequestError');
check(error.status === 400 && error.param === 'temperature', 'the error names the field');

console.log(JSON.stringify({ model, content: message.content, streamed, finish, usage }));
