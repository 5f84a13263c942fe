import { randomUUID } from 'node:crypto';
import type { TestApp } from './test-app';

export const uniq = (prefix = 't') => `${prefix}-${randomUUID().slice(0, 8)}`;

const letters = () => Array.from({ length: 3 }, () => String.fromCharCode(65 + Math.floor(Math.random() * 26))).join('');

export interface CompanyRecord {
  id: string;
  name: string;
  issuePrefix: string;
  [k: string]: unknown;
}

/** A company through the API (board caller of a local trusted instance unless a token is given). */
export async function createCompany(t: TestApp, extra: Record<string, unknown> = {}, token?: string): Promise<CompanyRecord> {
  const req = t.http.post('/api/companies').send({ name: `${letters()} ${uniq('Co')}`, ...extra });
  if (token) req.set('Authorization', `Bearer ${token}`);
  const res = await req;
  if (res.status !== 201) throw new Error(`createCompany: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as CompanyRecord;
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
