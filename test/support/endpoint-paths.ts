import type { endpoints } from '../../src/endpoints';
import { BASE_URL } from './capture';

/* Endpoint paths for MSW handlers and scripted servers, derived from the endpoint table rather than written again. */

/** A row of the endpoint table: `path` is like 'integrations/v1/opportunities/{id}'. */
type Endpoint = (typeof endpoints)[keyof typeof endpoints];

/** The path as an MSW pattern, parameters as `:name`: '/integrations/v1/opportunities/:id'. */
export const mswPath = (endpoint: Endpoint): string => `/${endpoint.path.replace(/\{(\w+)\}/g, ':$1')}`;

/** The path with its parameters filled in (percent-encoded): '/integrations/v1/opportunities/opp_1'. */
export const pathOf = (endpoint: Endpoint, params: Readonly<Record<string, string>> = {}): string =>
  `/${endpoint.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? `:${name}`))}`;

/** The absolute URL on the suite's base URL, as an MSW pattern: `${BASE_URL}/integrations/v1/contacts`. */
export const urlOf = (endpoint: Endpoint): string => `${BASE_URL}${mswPath(endpoint)}`;
