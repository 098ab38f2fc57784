// A real A2A 0.3 server on the JS SDK's last 0.3 release (@a2a-js/sdk 0.3.14), as platform teams still run it.
//
// Run: node tests/peers/js03/agent.mjs --port N [--grpc-port M]
// Serves JSON-RPC at /a2a/jsonrpc, the SDK's 0.3 REST at /a2a/rest (/a2a/rest/v1/message:send, ...), the 0.3
// card at /.well-known/agent-card.json on 127.0.0.1 and, with --grpc-port, the 0.3 gRPC service
// (a2a.v1.A2AService) on 127.0.0.1:M; the card advertises each (additionalInterfaces; gRPC schemeless, as the
// SDK's README writes it). Behaviour is keyed on the user's text, the table of tests/peers/py_agent.py and
// tests/peers/js/agent.mjs: input, slow, fail, raise, message; anything else -> artifact + completed.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import express from 'express';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { A2AService, UserBuilder as GrpcUserBuilder, grpcService } from '@a2a-js/sdk/server/grpc';
import { classify, serve, slowWork } from '../js_common.mjs';

const now = () => new Date().toISOString();
const textPart = (text) => ({ kind: 'text', text });

function userText(message) {
  return (message.parts ?? []).filter((p) => p.kind === 'text').map((p) => p.text).join('\n');
}


class Executor {
  #running = new Map(); // taskId -> AbortController of an in-flight "slow" execute()

  async execute(rc, bus) {
    const { taskId, contextId } = rc;
    const text = userText(rc.userMessage);
    const resuming = rc.task?.status?.state === 'input-required';
    let mode = resuming ? 'resume' : classify(text);
    if (mode === 'message' && rc.task) mode = 'echo'; // an existing task can't be answered by a bare Message

    if (mode === 'message') {
      bus.publish({ kind: 'message', messageId: randomUUID(), role: 'agent', contextId, parts: [textPart(`echo: ${text}`)] });
      bus.finished();
      return;
    }
    if (!rc.task) {
      bus.publish({
        kind: 'task', id: taskId, contextId, artifacts: [], history: [rc.userMessage],
        status: { state: 'submitted', timestamp: now() },
      });
    }
    const status = (state, final, text) => bus.publish({
      kind: 'status-update', taskId, contextId, final,
      status: {
        state, timestamp: now(),
        ...(text && { message: { kind: 'message', messageId: randomUUID(), role: 'agent', taskId, contextId, parts: [textPart(text)] } }),
      },
    });
    status('working', false);

    switch (mode) {
      case 'input':
        status('input-required', true, 'need more input');
        bus.finished();
        return;
      case 'fail':
        status('failed', true, 'failed on request');
        bus.finished();
        return;
      case 'raise':
        throw new Error('boom');
      case 'slow':
        if (!(await slowWork(this.#running, taskId))) return; // cancelTask() published CANCELED
        break;
    }
    bus.publish({
      kind: 'artifact-update', taskId, contextId, append: false, lastChunk: true,
      artifact: { artifactId: randomUUID(), name: 'result', parts: [textPart(`echo: ${text}`)] },
    });
    status('completed', true);
    bus.finished();
  }

  // Called only while execute() runs (the handler holds its event bus): the SDK waits for the final event.
  cancelTask = async (taskId, bus) => {
    this.#running.get(taskId)?.abort();
    bus.publish({ kind: 'status-update', taskId, contextId: '', final: true, status: { state: 'canceled', timestamp: now() } });
    bus.finished();
  };
}

function buildCard(port, grpcPort) {
  const base = `http://127.0.0.1:${port}`;
  const additionalInterfaces = [
    { url: `${base}/a2a/jsonrpc`, transport: 'JSONRPC' },
    { url: `${base}/a2a/rest`, transport: 'HTTP+JSON' },
  ];
  if (grpcPort) additionalInterfaces.push({ url: `127.0.0.1:${grpcPort}`, transport: 'GRPC' });
  return {
    name: 'js03-echo',
    description: '@a2a-js/sdk 0.3.14 peer',
    protocolVersion: '0.3.0',
    version: '1.0.0',
    url: `${base}/a2a/jsonrpc`,
    preferredTransport: 'JSONRPC',
    additionalInterfaces,
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'echoes', tags: ['echo'] }],
  };
}

function main() {
  const { values } = parseArgs({ options: { port: { type: 'string' }, 'grpc-port': { type: 'string' } } });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port <= 0) {
    console.error('usage: node agent.mjs --port N [--grpc-port M]');
    process.exit(2);
  }
  const grpcPort = values['grpc-port'] ? Number(values['grpc-port']) : undefined;
  const requestHandler = new DefaultRequestHandler(buildCard(port, grpcPort), new InMemoryTaskStore(), new Executor());
  const userBuilder = UserBuilder.noAuthentication;

  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder }));
  app.use('/a2a/rest', restHandler({ requestHandler, userBuilder }));

  let grpcServer;
  if (grpcPort) {
    grpcServer = new Server();
    grpcServer.addService(A2AService, grpcService({ requestHandler, userBuilder: GrpcUserBuilder.noAuthentication }));
  }
  serve(app, port, grpcServer, grpcPort, ServerCredentials.createInsecure());
}

main();
