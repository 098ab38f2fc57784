// The official JS A2A SDK's 1.x server as a reference peer: @a2a-js/sdk 1.3.0 (tests/peers/js/agent.mjs) and the
// 1.0 line's earliest release, 1.0.1 (tests/peers/js10/agent.mjs). No package imports: each peer's agent.mjs
// imports its own SDK (and express, grpc-js) and passes the modules to run(); the SDK's API is the same across 1.x.
//
// Run: node tests/peers/js/agent.mjs --port N [--grpc-port M] [--compat] [--push] [--public-url URL]
// [--public-grpc URL] (the last two: advertise a gateway's URLs instead of its own, as behind a gateway)
// --push declares capabilities.pushNotifications and wires the SDK's in-memory push store and sender.
// Serves JSON-RPC at /a2a/jsonrpc, REST at /a2a/rest and the card at /.well-known/agent-card.json
// on 127.0.0.1; with --grpc-port also gRPC (lf.a2a.v1.A2AService, and with --compat the 0.3 service
// a2a.v1.A2AService) on 127.0.0.1:M. With --compat the card also advertises the 0.3 REST (/a2a/rest/v1/...)
// and 0.3 gRPC interfaces. Behaviour is keyed on the user's text, mirroring tests/peers/py_agent.py.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import { classify, serve, slowWork } from './js_common.mjs';

let AgentEvent, Role, TaskState; // the running SDK's, set by run()
const now = () => new Date().toISOString();
// Complete ts-proto objects: the gRPC encoder iterates every repeated field, so none may be missing (JSON-RPC
// and REST serialise sparse objects, gRPC throws "Error serializing response").
const textPart = (value) => ({ content: { $case: 'text', value }, filename: '', mediaType: '' });
const message = (fields) => ({ extensions: [], referenceTaskIds: [], ...fields });

function userText(message) {
  return (message.parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('\n');
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
      bus.publish(AgentEvent.message(message({
        messageId: randomUUID(), role: Role.ROLE_AGENT, contextId, parts: [textPart(`echo: ${text}`)],
      })));
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
    const agentMessage = (value) => message({
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
        if (!(await slowWork(this.#running, taskId))) {
          status(TaskState.TASK_STATE_CANCELED);
          return;
        }
        break;
    }
    bus.publish(AgentEvent.artifactUpdate({
      taskId, contextId, append: false, lastChunk: true,
      artifact: {
        artifactId: randomUUID(), name: 'result', description: '', parts: [textPart(`echo: ${text}`)], extensions: [],
      },
    }));
    status(TaskState.TASK_STATE_COMPLETED);
    // No bus.finished(): the request handler settles the bus itself (pitfall #4).
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

function buildCard(sdkVersion, port, compat, push, grpcPort, publicUrl, publicGrpc) {
  const base = publicUrl ? publicUrl.replace(/\/+$/, '') : `http://127.0.0.1:${port}`;
  const grpcUrl = publicGrpc || `127.0.0.1:${grpcPort}`;
  const iface = (url, protocolBinding, protocolVersion) => ({ url, protocolBinding, protocolVersion, tenant: '' });
  const supportedInterfaces = [iface(`${base}/a2a/jsonrpc`, 'JSONRPC', '1.0')];
  // With legacyCompat the SDK derives the 0.3 card from the 0.3 interfaces and throws without one.
  // Same URL: the SDK picks the 0.3 or 1.0 module per request from the A2A-Version header.
  if (compat) supportedInterfaces.push(iface(`${base}/a2a/jsonrpc`, 'JSONRPC', '0.3'));
  supportedInterfaces.push(iface(`${base}/a2a/rest`, 'HTTP+JSON', '1.0'));
  // 0.3 REST on the same prefix (the SDK routes /v1/... to its 0.3 module when the header is absent or 0.3)
  if (compat) supportedInterfaces.push(iface(`${base}/a2a/rest`, 'HTTP+JSON', '0.3'));
  if (grpcPort) {  // schemeless host:port, as the SDKs advertise gRPC
    supportedInterfaces.push(iface(grpcUrl, 'GRPC', '1.0'));
    if (compat) supportedInterfaces.push(iface(grpcUrl, 'GRPC', '0.3'));
  }
  return {
    name: 'js-ref',
    description: `@a2a-js/sdk ${sdkVersion} reference peer`,
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

// sdk: {version, express, grpc (@grpc/grpc-js), core (@a2a-js/sdk), server (…/server), compat
// (…/compat/v0_3/server), http (…/server/express), rpc (…/server/grpc), legacyRpc (…/compat/v0_3/server/grpc)}
export function run(sdk) {
  ({ AgentEvent } = sdk.server);
  ({ Role, TaskState } = sdk.core);
  const { express, grpc: { Server, ServerCredentials } } = sdk;
  const { AGENT_CARD_PATH } = sdk.core;
  const { DefaultExecutionEventBusManager, DefaultPushNotificationSender, DefaultRequestHandler,
    InMemoryPushNotificationStore, InMemoryTaskStore } = sdk.server;
  const { createLegacyAwarePushNotificationSender } = sdk.compat;
  const { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } = sdk.http;
  const { A2AService, UserBuilder: GrpcUserBuilder, grpcService } = sdk.rpc;
  const { LegacyA2AService, legacyGrpcService } = sdk.legacyRpc;
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      'grpc-port': { type: 'string' },
      compat: { type: 'boolean', default: false },
      push: { type: 'boolean', default: false },
      'public-url': { type: 'string' },
      'public-grpc': { type: 'string' },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port <= 0) {
    console.error('usage: node agent.mjs --port N [--compat] [--push]');
    process.exit(2);
  }
  const legacyCompat = values.compat ? { enabled: true } : undefined;
  const grpcPort = values['grpc-port'] ? Number(values['grpc-port']) : undefined;
  const card = buildCard(sdk.version, port, values.compat, values.push, grpcPort, values['public-url'], values['public-grpc']);
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

  let grpcServer;
  if (grpcPort) {
    grpcServer = new Server();
    const grpcUsers = GrpcUserBuilder.noAuthentication;
    grpcServer.addService(A2AService, grpcService({ requestHandler, userBuilder: grpcUsers }));
    if (values.compat) {
      grpcServer.addService(LegacyA2AService, legacyGrpcService({ requestHandler, userBuilder: grpcUsers }));
    }
  }
  serve(app, port, grpcServer, grpcPort, ServerCredentials.createInsecure());
}

