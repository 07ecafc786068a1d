import type { CrmClient } from '../client';
import type { PagePromise } from '../core/page';
import type { ListOptions } from '../options';
import type { Command } from './commands';

/** What a command is given: its positional value and its input object, before the SDK checks them. */
export interface Invocation {
  readonly positional?: unknown;
  readonly input?: unknown;
}

type Method = (...args: unknown[]) => PromiseLike<unknown>;

/**
 * Calls the SDK's own method for a command (`crm.contacts.list(input, options)`), so that the
 * command line and the MCP server check, send, retry and fail exactly as the SDK does. The
 * arguments are the positional value, then the input object, then the options, each only when
 * the method takes it.
 */
export function invoke(
  crm: CrmClient,
  command: Command,
  { positional, input }: Invocation,
  options?: ListOptions,
): PromiseLike<unknown> | PagePromise<{ id: string }> {
  const resource = (crm as unknown as Record<string, Record<string, Method>>)[command.namespace];
  const method = resource?.[command.method];
  if (!resource || !method) throw new Error(`The SDK has no ${command.namespace}.${command.method}()`);
  const args: unknown[] = [];
  if (command.positional) args.push(positional);
  if (command.inputIn) args.push(input ?? {});
  args.push(options);
  return method.apply(resource, args);
}
