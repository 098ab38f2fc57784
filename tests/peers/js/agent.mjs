// Reference peer built on the official JS A2A SDK (@a2a-js/sdk 1.3.0).
//
// Run: node tests/peers/js/agent.mjs --port N [--compat] [--push]
// --push declares capabilities.pushNotifications and wires the SDK's in-memory push store and sender.
// Serves JSON-RPC at /a2a/jsonrpc, REST at /a2a/rest and the card at /.well-known/agent-card.json
// on 127.0.0.1. Behaviour is keyed on the user's text, mirroring tests/peers/py_agent.py.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent, DefaultExecutionEventBusManager, DefaultPushNotificationSender, DefaultRequestHandler,
  InMemoryPushNotificationStore, InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { createLegacyAwarePushNotificationSender } from '@a2a-js/sdk/compat/v0_3/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

const SLOW_MS = 30_000;

const now = () => new Date().toISOString();
const textPart = (value) => ({ content: { $case: 'text', value } });

function userText(message) {
  return (message.parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('\n');
}

// Precedence follows the behaviour table order, so e.g. "slow fail" is slow.
function classify(text) {
  for (const keyword of ['input', 'slow', 'fail', 'raise', 'message']) {
    if (text.includes(keyword)) return keyword;
  }
  return 'echo';
}

class Executor {
  #running = new Map(); // taskId -> AbortController of an in-flight "slow" execute()
  #awaitingInput = new Map(); // taskId -> contextId of INPUT_REQUIRED tasks (cancelTask() gets only the id)

  async execute(rc, bus) {
    const { taskId, contextId } = rc;
    const text = userText(rc.userMessage);
    const resuming = rc.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
    let mode = resuming ? 'resume' : classify(text);
    if (mode === 'message' && rc.task) mode = 'echo'; // an existing task can't be answered by a bare Message

    if (mode === 'message') {
      bus.publish(AgentEvent.message({
        messageId: randomUUID(), role: Role.ROLE_AGENT, contextId, parts: [textPart(`echo: ${text}`)],
      }));
      return;
    }
    this.#awaitingInput.delete(taskId);
    // The SDK rejects a turn whose first event is not a task, follow-ups included (pitfall #2).
    bus.publish(AgentEvent.task(rc.task ?? {
      id: taskId, contextId, artifacts: [], history: [rc.userMessage],
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now() },
    }));
    const status = (state, message) => bus.publish(AgentEvent.statusUpdate({
      taskId, contextId, status: { state, timestamp: now(), ...(message && { message }) },
    }));
    const agentMessage = (value) => ({
      messageId: randomUUID(), role: Role.ROLE_AGENT, taskId, contextId, parts: [textPart(value)],
    });
    status(TaskState.TASK_STATE_WORKING);

    switch (mode) {
      case 'input':
        this.#awaitingInput.set(taskId, contextId);
        status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage('need more input'));
        return;
      case 'fail':
        status(TaskState.TASK_STATE_FAILED, agentMessage('failed on request'));
        return;
      case 'raise':
        throw new Error('boom');
      case 'slow':
        if (!(await this.#work(taskId))) {
          status(TaskState.TASK_STATE_CANCELED);
          return;
        }
        break;
    }
    bus.publish(AgentEvent.artifactUpdate({
      taskId, contextId, append: false, lastChunk: true,
      artifact: { artifactId: randomUUID(), name: 'result', parts: [textPart(`echo: ${text}`)] },
    }));
    status(TaskState.TASK_STATE_COMPLETED);
    // No bus.finished(): the request handler settles the bus itself (pitfall #4).
  }

  // Returns false when cancelTask() aborted the work.
  async #work(taskId) {
    const controller = new AbortController();
    this.#running.set(taskId, controller);
    try {
      await sleep(SLOW_MS, undefined, { signal: controller.signal });
      return true;
    } catch (err) {
      if (err.name === 'AbortError') return false;
      throw err;
    } finally {
      this.#running.delete(taskId);
    }
  }

  cancelTask = async (taskId, bus) => {
    const controller = this.#running.get(taskId);
    if (controller) {
      controller.abort(); // the running execute() publishes CANCELED
      return;
    }
    // Nothing is running (e.g. INPUT_REQUIRED): the handler waits for a terminal event, so publish it
    // here or CancelTask hangs forever (pitfall #3).
    const contextId = this.#awaitingInput.get(taskId) ?? '';
    this.#awaitingInput.delete(taskId);
    bus.publish(AgentEvent.statusUpdate({
      taskId, contextId, status: { state: TaskState.TASK_STATE_CANCELED, timestamp: now() },
    }));
  };
}

function buildCard(port, compat, push) {
  const base = `http://127.0.0.1:${port}`;
  const iface = (url, protocolBinding, protocolVersion) => ({ url, protocolBinding, protocolVersion, tenant: '' });
  const supportedInterfaces = [iface(`${base}/a2a/jsonrpc`, 'JSONRPC', '1.0')];
  // With legacyCompat the SDK derives the 0.3 card from the 0.3 interfaces and throws without one.
  // Same URL: the SDK picks the 0.3 or 1.0 module per request from the A2A-Version header.
  if (compat) supportedInterfaces.push(iface(`${base}/a2a/jsonrpc`, 'JSONRPC', '0.3'));
  supportedInterfaces.push(iface(`${base}/a2a/rest`, 'HTTP+JSON', '1.0'));
  return {
    name: 'js-ref',
    description: '@a2a-js/sdk 1.3.0 reference peer',
    version: '1.0.0',
    supportedInterfaces,
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: push, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{
      id: 'echo', name: 'Echo', description: 'echoes', tags: ['test'],
      examples: [], inputModes: [], outputModes: [], securityRequirements: [],
    }],
    signatures: [],
  };
}

function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      compat: { type: 'boolean', default: false },
      push: { type: 'boolean', default: false },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port <= 0) {
    console.error('usage: node agent.mjs --port N [--compat] [--push]');
    process.exit(2);
  }
  const legacyCompat = values.compat ? { enabled: true } : undefined;
  const card = buildCard(port, values.compat, values.push);
  let requestHandler;
  if (values.push) {
    // The SDK's in-memory push store and its sender; with compat, 0.3 webhooks get 0.3-shaped bodies.
    const store = new InMemoryPushNotificationStore();
    const sender = values.compat ? createLegacyAwarePushNotificationSender(store) : new DefaultPushNotificationSender(store);
    requestHandler = new DefaultRequestHandler(
      card, new InMemoryTaskStore(), new Executor(), new DefaultExecutionEventBusManager(), store, sender);
  } else {
    requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Executor());
  }
  const userBuilder = UserBuilder.noAuthentication;

  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder, legacyCompat }));
  app.use('/a2a/rest', restHandler({ requestHandler, userBuilder, legacyCompat }));

  const server = app.listen(port, '127.0.0.1', (err) => {
    if (err) {
      console.error(err);
      process.exit(1);
    }
  });
  // Exit promptly on SIGTERM/SIGINT even with open SSE streams (the harness waits for exit).
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.on(sig, () => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
      setTimeout(() => process.exit(0), 500).unref();
    });
  }
}

main();
