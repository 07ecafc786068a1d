/**
 * `npm run demo`, first part: `crm sync` end to end against the fake CRM on a free loopback port.
 * A load of a CSV export, a change of one record in the file, and a re-run that sends only it,
 * with what the CLI printed and the requests the CRM received at each step.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeCrmServer } from 'crm-integration-sdk/testing';

const say = (line: string) => process.stdout.write(`${line}\n`);
const CRM = fileURLToPath(new URL('../dist/cli/crm.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'crm-sync-demo-'));
const server = await startFakeCrmServer({ tenantId: 'tenant_demo' });

try {
  const { baseUrl, tenantId, apiKey } = server.fake.credentials;
  // The key goes through the environment, never a flag: other users can read command lines.
  const env = { PATH: process.env.PATH, CRM_BASE_URL: baseUrl, CRM_TENANT_ID: tenantId, CRM_API_KEY: apiKey ?? '' };
  const journal = join(dir, 'demo.db');
  const accounts = join(dir, 'accounts.csv');
  const contacts = join(dir, 'contacts.csv');
  writeFileSync(accounts, 'key,name,industry\nA-1,Acme Ltd,Retail\nA-2,Globex,Energy\nA-3,Initech,Software\n');
  writeFileSync(
    contacts,
    'key,accountKey,firstName,lastName,email\nP-1,A-1,Ann,Lee,ann@acme.example\nP-2,A-2,Bob,Ray,bob@globex.example\n',
  );
  // Run as a child process, asynchronously: the fake answers from this process meanwhile.
  const crm = (...args: string[]) =>
    new Promise<number | null>((done, fail) => {
      const child = spawn(process.execPath, [CRM, 'sync', ...args], { env });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
      });
      child.on('error', fail);
      child.on('close', (code) => {
        for (const line of out.trimEnd().split('\n')) if (line) say(`   | ${line}`);
        done(code);
      });
    });
  const writes = () => server.fake.requests.filter((r) => r.method !== 'GET');
  let seen = 0;
  const sent = () => {
    const now = writes();
    const these = now.slice(seen).map((r) => `${r.method} ${r.path}`);
    seen = now.length;
    return these.length ? these.join(', ') : 'nothing';
  };

  say(`1. The fake CRM listens on ${baseUrl}; the export is ${accounts} and ${contacts}.`);
  say('2. crm sync plan: what apply would do, sending nothing');
  await crm('plan', '--journal', journal, '--accounts', accounts, '--contacts', contacts, '--summary');
  say('3. crm sync apply: the first load');
  const first = await crm('apply', '--journal', journal, '--accounts', accounts, '--contacts', contacts, '--summary');
  say(`   exit ${first}; the CRM received: ${sent()}`);

  writeFileSync(accounts, readFileSync(accounts, 'utf8').replace('A-2,Globex,Energy', 'A-2,Globex,Utilities'));
  say('4. One record changed in the export (A-2: industry Energy → Utilities); crm sync plan shows it:');
  await crm('plan', '--journal', journal, '--accounts', accounts, '--contacts', contacts, '--json');
  say('5. crm sync apply again: only the changed record is sent, with only its changed field');
  const again = await crm('apply', '--journal', journal, '--accounts', accounts, '--contacts', contacts, '--summary');
  say(`   exit ${again}; the CRM received: ${sent()}`);
  const put = writes().at(-1);
  if (put) say(`   its body: ${JSON.stringify(put.body)}`);
  say('6. crm sync ids: the CRM id of every record the journal maps');
  await crm('ids', '--journal', journal);
  say("Done. crm-fake dump shows a running fake's store the same way (crm-fake dump --help).");
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
