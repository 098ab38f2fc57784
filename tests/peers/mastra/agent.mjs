// Mastra's own A2A server (@mastra/server 1.67.0's A2A routes, registered by @mastra/hono 1.7.9's MastraServer on a
// Hono app served by @hono/node-server), not built on the official SDKs' servers, with a Mastra Agent (@mastra/core
// 1.71.0) whose model is the AI SDK's own test model (ai/test MockLanguageModelV3): no LLM, no network.
//
// Run: node tests/peers/mastra/agent.mjs --port N. Serves the agent "echo" as `mastra dev` does, under Mastra's
// default route prefix /api: the card at /api/.well-known/echo/agent-card.json, JSON-RPC at /api/a2a/echo, on
// 127.0.0.1 only. Mastra's anonymous telemetry (PostHog) is switched off and its model-registry refresh kept off
// (MASTRA_TELEMETRY_DISABLED, MASTRA_OFFLINE: read when @mastra/core loads, hence the dynamic imports below).
// Behaviour is keyed on the user's text, the table of tests/peers/js_common.mjs where Mastra's A2A server can express
// it: "fail" makes the model throw, "slow" keeps it working SLOW_MS (aborted by tasks/cancel), anything else is
// echoed and completed.
import { parseArgs } from 'node:util';

process.env.MASTRA_TELEMETRY_DISABLED = '1';
process.env.MASTRA_OFFLINE = '1';
process.env.MASTRA_AUTO_REFRESH_PROVIDERS = 'false';

const { Agent } = await import('@mastra/core/agent');
const { Mastra } = await import('@mastra/core/mastra');
const { MastraServer } = await import('@mastra/hono');
const { InMemoryTaskStore } = await import('@mastra/server/a2a/store');
const { Hono } = await import('hono');
const { serve } = await import('@hono/node-server');
const { simulateReadableStream } = await import('ai');
const { MockLanguageModelV3 } = await import('ai/test');
const { echoModel } = await import('../js_common.mjs');

const { values } = parseArgs({ options: { port: { type: 'string' } } });
const model = echoModel(MockLanguageModelV3, simulateReadableStream);

const echo = new Agent({ id: 'echo', name: 'echo', instructions: "Echoes the user's text.", model });
const mastra = new Mastra({ agents: { echo } });
const app = new Hono();
// as @mastra/deployer's createHonoServer (what `mastra dev` and `mastra build` serve) does: one in-memory A2A task store
await new MastraServer({ app, mastra, taskStore: new InMemoryTaskStore() }).init();
const server = serve({ fetch: app.fetch, port: Number(values.port), hostname: '127.0.0.1' });
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {  // open SSE streams or not
    server.closeAllConnections?.();
    process.exit(0);
  });
}
