// What the JS SDK peers (tests/peers/js_v1_agent.mjs for js/ and js10/, tests/peers/js03/agent.mjs) do to serve: the express app on
// 127.0.0.1:port, the gRPC server (if any) on 127.0.0.1:grpcPort, and a prompt exit on SIGTERM/SIGINT even with
// open SSE streams (the harness waits for exit); and the behaviour table's keywords and slow work. No package
// imports: each peer passes its own SDK's objects.
import { setTimeout as sleep } from 'node:timers/promises';

export function serve(app, port, grpcServer, grpcPort, credentials) {
  const exitOn = (err) => {
    if (err) {
      console.error(err);
      process.exit(1);
    }
  };
  grpcServer?.bindAsync(`127.0.0.1:${grpcPort}`, credentials, exitOn);
  const server = app.listen(port, '127.0.0.1', exitOn);
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.on(sig, () => {
      grpcServer?.forceShutdown();
      server.closeAllConnections();
      server.close(() => process.exit(0));
      setTimeout(() => process.exit(0), 500).unref();
    });
  }
}

export const SLOW_MS = 30_000;
export const KEYWORDS = ['input', 'slow', 'fail', 'raise', 'message'];

// Precedence follows the behaviour table order, so e.g. "slow fail" is slow.
export const classify = (text) => KEYWORDS.find((k) => text.includes(k)) ?? 'echo';

// The "slow" work: SLOW_MS of sleep, abortable through the controller kept in `running` under the task's id.
// Returns false when cancelTask() aborted it.
export async function slowWork(running, taskId) {
  const controller = new AbortController();
  running.set(taskId, controller);
  try {
    await sleep(SLOW_MS, undefined, { signal: controller.signal });
    return true;
  } catch (err) {
    if (err.name === 'AbortError') return false;
    throw err;
  } finally {
    running.delete(taskId);
  }
}

// The echo model of the framework peers (tests/peers/voltagent, tests/peers/mastra): the AI SDK's own test model
// (ai/test MockLanguageModelV3, passed in with `ai`'s simulateReadableStream from the peer's own node_modules)
// answering "echo: <the user's text>", keyed on the behaviour table: "fail"/"raise" throw, "slow" works SLOW_MS
// (aborted with the call). No LLM, no network.
export function echoModel(MockLanguageModelV3, simulateReadableStream) {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
                  outputTokens: { total: 1, text: 1, reasoning: 0 } };
  const finishReason = { unified: 'stop', raw: 'stop' };
  const userText = (prompt) => {
    const user = [...prompt].reverse().find((m) => m.role === 'user');
    return (user?.content ?? []).filter((p) => p.type === 'text').map((p) => p.text).join(' ');
  };
  const answer = async ({ prompt, abortSignal }) => {
    const text = userText(prompt);
    const mode = classify(text);
    if (mode === 'fail' || mode === 'raise') throw new Error('failed on request');
    if (mode === 'slow') await sleep(SLOW_MS, undefined, { signal: abortSignal });
    return `echo: ${text}`;
  };
  return new MockLanguageModelV3({
    provider: 'a2a-probe',
    modelId: 'echo',
    doGenerate: async (options) => ({
      content: [{ type: 'text', text: await answer(options) }], finishReason, usage, warnings: [],
    }),
    doStream: async (options) => {
      const text = await answer(options);
      return {
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: text },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason, usage },
          ],
        }),
      };
    },
  });
}
