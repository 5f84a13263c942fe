import { redactUrl } from '../../src/logger';

describe('request log lines', () => {
  it('mask tokens carried in the path and drop the query string', () => {
    expect(redactUrl('/api/invites/svc_iv_5sGkvBaMV5N--xyHpsCoOFpAIC6SYiUpz5iNJO-YICo/accept')).toBe('/api/invites/svc_iv_[redacted]/accept');
    expect(redactUrl('/api/x/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln?token=abc')).toBe('/api/x/[redacted]');
    expect(redactUrl('/api/companies/6bbe09c6-6459-4873-a3c4-4f35a50f8ea0/issues?q=x')).toBe('/api/companies/6bbe09c6-6459-4873-a3c4-4f35a50f8ea0/issues');
    expect(redactUrl(undefined)).toBeUndefined();
  });
});
