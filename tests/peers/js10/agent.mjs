// A reference peer on @a2a-js/sdk 1.0.1 (this folder's package-lock.json): tests/peers/js_v1_agent.mjs run with
// this folder's SDK, express and grpc-js. Usage there.
import express from 'express';
import * as grpc from '@grpc/grpc-js';
import * as core from '@a2a-js/sdk';
import * as server from '@a2a-js/sdk/server';
import * as compat from '@a2a-js/sdk/compat/v0_3/server';
import * as http from '@a2a-js/sdk/server/express';
import * as rpc from '@a2a-js/sdk/server/grpc';
import * as legacyRpc from '@a2a-js/sdk/compat/v0_3/server/grpc';
import { run } from '../js_v1_agent.mjs';

run({ version: '1.0.1', express, grpc, core, server, compat, http, rpc, legacyRpc });
