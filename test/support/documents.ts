import type { Test } from 'supertest';
import type { TestApp } from './test-app';

export const docPath = (issueId: string, key: string) => `/api/issues/${issueId}/documents/${key}`;

/** PUT a markdown document (board unless headers say otherwise); returns the raw response. */
export function putDoc(
  t: TestApp,
  issueId: string,
  key: string,
  body: string,
  opts: { baseRevisionId?: string | null; title?: string; headers?: Record<string, string>; changeSummary?: string } = {},
): Test {
  const payload: Record<string, unknown> = { title: opts.title ?? 'Doc', format: 'markdown', body };
  if (opts.baseRevisionId !== undefined) payload.baseRevisionId = opts.baseRevisionId;
  if (opts.changeSummary !== undefined) payload.changeSummary = opts.changeSummary;
  return t.http
    .put(docPath(issueId, key))
    .set(opts.headers ?? {})
    .send(payload);
}

/** Latest revision { id, number } of a document. */
export async function latestRevision(t: TestApp, issueId: string, key: string): Promise<{ id: string; number: number }> {
  const res = await t.http.get(`${docPath(issueId, key)}/revisions`).expect(200);
  return { id: res.body[0].id, number: res.body[0].revisionNumber };
}

/** Creates a document and returns its latest revision. */
export async function createDoc(t: TestApp, issueId: string, key: string, body: string, headers: Record<string, string> = {}) {
  const res = await putDoc(t, issueId, key, body, { headers });
  if (res.status !== 201) throw new Error(`createDoc: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.latestRevisionId as string, number: res.body.latestRevisionNumber as number };
}

/** Quote + position selector of `exact` (its `occurrence`-th match) in a markdown body without markup. */
export function selectorFor(body: string, exact: string, occurrence = 0) {
  let start = -1;
  for (let i = 0; i <= occurrence; i++) start = body.indexOf(exact, start + 1);
  if (start < 0) throw new Error(`"${exact}" not in body`);
  const end = start + exact.length;
  return {
    quote: { exact, prefix: body.slice(Math.max(0, start - 16), start), suffix: body.slice(end, end + 16) },
    position: { normalizedStart: start, normalizedEnd: end, markdownStart: start, markdownEnd: end },
  };
}

/** Creates an annotation thread on the latest revision; returns the thread. */
export async function createThread(
  t: TestApp,
  issueId: string,
  key: string,
  body: string,
  exact: string,
  headers: Record<string, string> = {},
  comment = `on ${exact}`,
) {
  const rev = await latestRevision(t, issueId, key);
  const res = await t.http
    .post(`${docPath(issueId, key)}/annotations`)
    .set(headers)
    .send({ baseRevisionId: rev.id, baseRevisionNumber: rev.number, selector: selectorFor(body, exact), body: comment });
  if (res.status !== 201) throw new Error(`createThread: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Multipart upload of one file to an issue; returns the raw response. */
export function upload(
  t: TestApp,
  companyId: string,
  issueId: string,
  name: string,
  contentType: string,
  content: string | Buffer,
  opts: { headers?: Record<string, string>; fields?: Record<string, string> } = {},
): Test {
  const req = t.http.post(`/api/companies/${companyId}/issues/${issueId}/attachments`).set(opts.headers ?? {});
  for (const [k, v] of Object.entries(opts.fields ?? {})) req.field(k, v);
  return req.attach('file', typeof content === 'string' ? Buffer.from(content) : content, { filename: name, contentType });
}

export const PNG_1x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** Activity actions recorded for an issue, oldest first. */
export async function activityActions(t: TestApp, issueId: string): Promise<string[]> {
  const rows = await t.dataSource.query(
    `SELECT action FROM activity_log WHERE entity_type = 'issue' AND entity_id = $1 ORDER BY created_at, id`,
    [issueId],
  );
  return rows.map((r: { action: string }) => r.action);
}
