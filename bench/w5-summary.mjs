// What W5 reads from a fake once a subject-run is over, wherever the fake ran.

/**
 * The fake's request log as [receivedAt, status] pairs, and per tenant the contacts it stored and
 * how many distinct emails they carry (each create sends an email of its own, so the difference
 * is the duplicates), with the requests of its key and how many of them were answered 429.
 */
export function summarize(fake, tenantIds) {
  const byKey = new Map();
  const log = fake.requests.map((request) => {
    const key = request.headers['x-api-key'];
    const counts = byKey.get(key) ?? { requests: 0, refused: 0 };
    counts.requests += 1;
    if (request.status === 429) counts.refused += 1;
    byKey.set(key, counts);
    return [request.receivedAt, request.status];
  });
  const tenants = Object.fromEntries(
    tenantIds.map((id) => {
      const contacts = fake.store.contactsOf(id);
      const counts = byKey.get(fake.store.tenants.get(id)?.apiKey) ?? { requests: 0, refused: 0 };
      return [id, { stored: contacts.length, distinct: new Set(contacts.map((c) => c.email)).size, ...counts }];
    }),
  );
  return { log, tenants };
}
