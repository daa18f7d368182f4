// Runs the AI SDK's own pre-flight (the functions generateText/streamText call before any request) on
// payloads built by app/providers/ai_sdk.py, fully offline.
//
// stdin: a JSON array of payloads {model, system?, messages, tools?, maxOutputTokens?, providerOptions?, output?}.
// stdout: a JSON array with one {ok, name?, message?, issues?} per payload, in order.
// One process checks a whole batch so that Python tests pay Node's start-up once.
// It must never touch the network: URLs stay URLs (download returns null) and no model is called.
import { Output, jsonSchema } from 'ai';
import {
  convertToLanguageModelPrompt,
  prepareCallSettings,
  prepareToolsAndToolChoice,
  standardizePrompt,
} from 'ai/internal';

async function readStdin() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return JSON.parse(text);
}

async function check(payload) {
  const expected = new Set(['model', 'system', 'messages', 'tools', 'maxOutputTokens', 'providerOptions', 'output']);
  const extra = Object.keys(payload).filter((key) => !expected.has(key));
  if (extra.length > 0) throw Object.assign(new Error(`unexpected payload keys: ${extra.join(', ')}`), { name: 'ProjectorShapeError' });
  if (typeof payload.model !== 'string' || payload.model.length === 0) {
    throw Object.assign(new Error('model must be a non-empty string'), { name: 'ProjectorShapeError' });
  }
  // false, not undefined: system text belongs in the `system` option, and the SDK then refuses it elsewhere.
  const prompt = await standardizePrompt({
    system: payload.system,
    messages: payload.messages,
    allowSystemInMessages: false,
  });
  await convertToLanguageModelPrompt({
    prompt,
    supportedUrls: {},
    download: async (requests) => requests.map(() => null),
  });
  const tools = payload.tools == null ? undefined : Object.fromEntries(
    Object.entries(payload.tools).map(([name, tool]) => [name, { ...tool, inputSchema: jsonSchema(tool.inputSchema) }]),
  );
  await prepareToolsAndToolChoice({ tools, toolChoice: undefined, activeTools: undefined });
  prepareCallSettings({ maxOutputTokens: payload.maxOutputTokens });
  const options = payload.providerOptions ?? {};
  if (typeof options !== 'object' || Array.isArray(options)
      || Object.values(options).some((value) => typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw Object.assign(new Error('providerOptions must map provider names to objects'), { name: 'ProjectorShapeError' });
  }
  if (payload.output != null) {
    const { type, schema, name, description } = payload.output;
    if (type !== 'object') throw Object.assign(new Error(`output type ${type}`), { name: 'ProjectorShapeError' });
    const output = Output.object({ schema: jsonSchema(schema), name, description });
    await output.responseFormat;
  }
}

const payloads = await readStdin();
const results = [];
for (const payload of payloads) {
  try {
    await check(payload);
    results.push({ ok: true });
  } catch (error) {
    results.push({
      ok: false,
      name: error?.name,
      message: error?.message,
      issues: error?.cause?.issues ?? error?.cause?.cause?.issues,
    });
  }
}
process.stdout.write(JSON.stringify(results));
