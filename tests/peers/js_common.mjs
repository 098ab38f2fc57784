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
