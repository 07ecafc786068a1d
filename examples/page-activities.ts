/** Pages through every activity of an opportunity with `for await`, counting them by type. */
import type { CrmClient } from 'crm-integration-sdk';

export async function countActivitiesByType(crm: CrmClient, opportunityId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for await (const activity of crm.activities.list({ opportunityId, limit: 200 })) {
    const type = activity.type ?? 'unknown';
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}
