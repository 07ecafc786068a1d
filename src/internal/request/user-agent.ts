import type { AppInfo } from '../../options';

/** The package's version, written in by the build from package.json (tsup.config.ts, vitest.config.ts). */
declare const __SDK_VERSION__: string;

interface Runtimes {
  readonly Deno?: { readonly version?: { readonly deno?: string }; readonly build?: { readonly os?: string } };
  readonly process?: { readonly versions?: Readonly<Record<string, string | undefined>>; readonly platform?: string };
}

/**
 * The SDK's User-Agent, `crm-integration-sdk/<version> (<runtime>/<version>; <os>)` with the
 * app's `<name>/<version> (+<url>)` after it, as Stripe's SDKs send theirs. Undefined where the
 * runtime is not Node, Bun or Deno: a browser sends its own, and forbids a script to set it.
 */
export function userAgent(app: AppInfo | undefined): string | undefined {
  const { Deno, process } = globalThis as Runtimes;
  const versions = process?.versions;
  const runtime = Deno?.version?.deno
    ? `deno/${Deno.version.deno}; ${Deno.build?.os}`
    : versions?.bun
      ? `bun/${versions.bun}; ${process?.platform}`
      : versions?.node
        ? `node/${versions.node}; ${process?.platform}`
        : undefined;
  if (!runtime) return undefined;
  const named = app ? ` ${app.name}${app.version ? `/${app.version}` : ''}${app.url ? ` (+${app.url})` : ''}` : '';
  return `crm-integration-sdk/${__SDK_VERSION__} (${runtime})${named}`;
}
