// W5's fake CRM, in a process of its own so that serving does not take the clients' event loop
// (bench/w5.mjs says why). Driven over IPC by bench/w5.mjs, one fresh fake per subject-run:
//   { type: 'start', options }  -> { type: 'started', url, credentials }
//   { type: 'stop', tenants }   -> { type: 'stopped', log, tenants }, the fake closed
import { startFakeCrmServer } from '../dist/testing.js';
import { summarize } from './w5-summary.mjs';

let server;
process.on('message', async (message) => {
  if (message.type === 'start') {
    server = await startFakeCrmServer(message.options);
    process.send({ type: 'started', url: server.url, credentials: server.fake.credentials });
  } else if (message.type === 'stop') {
    const summary = summarize(server.fake, message.tenants);
    await server.close();
    server = undefined;
    process.send({ type: 'stopped', ...summary });
  }
});
process.on('disconnect', () => process.exit(0));
