// The process's OpenTelemetry, as a service sets it up (README, "Tracing"): NodeSDK registers the
// context manager and the W3C propagator that parent spans and send `traceparent`, which a bare
// tracer provider does not. With the auto-instrumentations, undici's instrumentation traces every
// fetch; the SDK's attempts stay one CLIENT span each, under their call's.
import { getNodeAutoInstrumentations } from '@opentelemetry/auto-instrumentations-node';
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { instrumentCrm } from 'crm-integration-sdk/otel';

/**
 * Starts tracing for the process: load it before the rest (`node --import ./tracing.ts app.ts`).
 * `config` adds to NodeSDK's (an exporter or span processors; without them it reads the `OTEL_*`
 * variables). Returns what flushes and stops it, for the end of a job.
 */
export function startTracing(config: Partial<NodeSDKConfiguration> = {}): () => Promise<void> {
  const sdk = new NodeSDK({ instrumentations: [getNodeAutoInstrumentations()], ...config });
  sdk.start();
  const stopCrm = instrumentCrm();
  return async () => {
    stopCrm();
    await sdk.shutdown();
  };
}
