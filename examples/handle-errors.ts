/** What an integration sees when a record does not exist, and when its own input is invalid. */
import { type CrmClient, CrmNotFoundError, CrmValidationError } from 'crm-integration-sdk';

export async function showErrors(crm: CrmClient): Promise<string[]> {
  const lines: string[] = [];
  try {
    await crm.opportunities.get('opp_does_not_exist');
  } catch (error) {
    if (!(error instanceof CrmNotFoundError)) throw error;
    lines.push(`404 handled: ${error.message}`);
  }
  try {
    // An empty subject and an unknown type: refused before anything is sent.
    await crm.activities.create({ opportunityId: 'opp_1', type: 'fax' as 'call', subject: '' });
  } catch (error) {
    if (!(error instanceof CrmValidationError)) throw error;
    lines.push(`validation handled: ${error.issues.map((issue) => issue.field).join(', ')}`);
  }
  return lines;
}
