// VoltAgent's own A2A server (@voltagent/a2a-server 2.0.3 on @voltagent/server-hono 2.0.14), not built on the official
// SDKs' servers, with a VoltAgent Agent whose model is the AI SDK's own test model (ai/test MockLanguageModelV3):
// no LLM, no network.
//
// Run: NODE_ENV=production node tests/peers/voltagent/agent.mjs --port N (production: VoltAgent then skips its
// model-registry refresh from the network; it sends nothing else without VoltOps keys). Serves the A2A server "echo"
// as VoltAgent does: JSON-RPC at /a2a/echo, the card at /.well-known/echo/agent-card.json, on 127.0.0.1 (its port
// check binds 0.0.0.0:N for a moment first and closes it, accepting nothing: server-core's PortManager).
// Behaviour is keyed on the user's text, the table of tests/peers/js_common.mjs where VoltAgent's A2A server can
// express it (it runs the agent to the end: no input-required, no Message answers): "fail" makes the model throw,
// "slow" keeps it working SLOW_MS (aborted by tasks/cancel), anything else is echoed and completed.
import { parseArgs } from 'node:util';

import { Agent, VoltAgent } from '@voltagent/core';
import { A2AServer } from '@voltagent/a2a-server';
import { honoServer } from '@voltagent/server-hono';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { echoModel } from '../js_common.mjs';

const { values } = parseArgs({ options: { port: { type: 'string' } } });
const model = echoModel(MockLanguageModelV3, simulateReadableStream);

const agent = new Agent({ id: 'echo', name: 'echo', purpose: "echoes the user's text", instructions: 'echo', model });
new VoltAgent({
  agents: { echo: agent },
  a2aServers: { echo: new A2AServer({ name: 'echo', version: '0.0.1' }) },
  server: honoServer({ port: Number(values.port), hostname: '127.0.0.1' }),
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));  // open SSE streams or not
