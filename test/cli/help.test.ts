import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { commands, kebab, words } from '../../src/cli/commands';
import { connectionOptions, inputOption, listOptions } from '../../src/cli/global-options';
import { openApiDocument } from '../../src/cli/openapi';
import { endpoints } from '../../src/endpoints';
import { runCrm } from '../support/run-crm';

describe('crm --help', () => {
  it('lists every endpoint as a command, and openapi and mcp', async () => {
    const run = await runCrm(['--help']);
    expect(run.code).toBe(0);
    for (const command of commands) expect(run.stdout).toContain(`  ${words(command)}`);
    expect(run.stdout).toMatch(/^ {2}openapi /m);
    expect(run.stdout).toMatch(/^ {2}mcp \[--allow-writes\] /m);
    expect(run.stdout).toContain('Exit codes:');
    expect(commands).toHaveLength(Object.keys(endpoints).length);
  });

  it('lists the commands of a namespace', async () => {
    const run = await runCrm(['contacts', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}contacts create +Creates a contact\.$/m);
    expect(run.stdout).toMatch(/^ {2}contacts update <id> /m);
    expect(run.stdout).toMatch(/^ {2}contacts list /m);
    expect(run.stdout).not.toContain('opportunities');
  });

  it('lists a command’s flags with their types, enum values and which are required', async () => {
    const run = await runCrm(['opportunities', 'create', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('POST /integrations/v1/opportunities');
    expect(run.stdout).toMatch(/^ {2}--name <value> +string, min length 1 \(required\)$/m);
    expect(run.stdout).toMatch(/^ {2}--amount <value> +number$/m);
    expect(run.stdout).toMatch(/^ {2}--type <value> +one of: new_business, existing_business, upsell, renewal$/m);
    expect(run.stdout).toMatch(/^ {2}--expected-close-date <value> +date-time/m);
    const list = await runCrm(['contacts', 'list', '--help']);
    expect(list.stdout).toMatch(/^ {2}--limit <value> +integer, >= 1, <= 200$/m);
    expect(list.stdout).toMatch(/^ {2}--all /m);
    const primary = await runCrm(['contacts', 'create', '--help']);
    expect(primary.stdout).toMatch(/^ {2}--is-primary, --no-is-primary +boolean$/m);
  });

  it('prints the usage on stderr and exits 2 when no command is given', async () => {
    const run = await runCrm([]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Usage: crm <namespace> <command>');
  });

  it('prints the package version', async () => {
    const run = await runCrm(['--version']);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('the command table', () => {
  it('gives no field a flag that an option of the command line already takes', () => {
    const taken = new Set(
      [connectionOptions, inputOption, listOptions].flatMap((options) => Object.keys(options)).concat('version'),
    );
    for (const command of commands) {
      for (const field of command.fields)
        expect({ command: command.name, flag: taken.has(field.flag) }).toEqual({ command: command.name, flag: false });
    }
  });

  it('names each command as the SDK does, in kebab case', () => {
    expect(commands.map(words)).toEqual([
      'opportunities get',
      'opportunities create',
      'opportunities update',
      'activities list',
      'activities create',
      'accounts create',
      'accounts update',
      'contacts create',
      'contacts update',
      'contacts list',
      'grants resolve',
      'api-key status',
      'api-key generate',
    ]);
    expect(kebab('pipelineStageId')).toBe('pipeline-stage-id');
  });
});

describe('crm openapi', () => {
  it('prints the OpenAPI 3.1 document of the table, with the package version, and it validates', async () => {
    const run = await runCrm(['openapi']);
    expect(run.code).toBe(0);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const printed = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(printed).toEqual(JSON.parse(JSON.stringify(openApiDocument({ version }))));
    const result = await new Validator().validate(printed);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });
});
