import { Writable } from 'node:stream';
import { createRootLogger, redactUrl } from '../../src/logger';

describe('request log lines', () => {
  it('mask tokens carried in the path and drop the query string', () => {
    expect(redactUrl('/api/invites/svc_iv_5sGkvBaMV5N--xyHpsCoOFpAIC6SYiUpz5iNJO-YICo/accept')).toBe(
      '/api/invites/svc_iv_[redacted]/accept',
    );
    expect(redactUrl('/api/x/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln?token=abc')).toBe('/api/x/[redacted]');
    expect(redactUrl('/api/companies/6bbe09c6-6459-4873-a3c4-4f35a50f8ea0/issues?q=x')).toBe(
      '/api/companies/6bbe09c6-6459-4873-a3c4-4f35a50f8ea0/issues',
    );
    expect(redactUrl(undefined)).toBeUndefined();
  });
});

describe('the root logger', () => {
  const capture = () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    return { lines, destination };
  };

  it("writes JSON lines, with Nest's module and route-mapping lines at debug", () => {
    const { lines, destination } = capture();
    const info = createRootLogger('info', { pretty: false, destination });
    info.info({ context: 'RouterExplorer' }, 'Mapped {/api/x, GET} route');
    info.info({ context: 'InstanceLoader' }, 'XModule dependencies initialized');
    info.info({ context: 'Bootstrap' }, 'listening');
    expect(lines.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ level: 30, context: 'Bootstrap', msg: 'listening' })]);
    const { lines: debugLines, destination: d2 } = capture();
    createRootLogger('debug', { pretty: false, destination: d2 }).info({ context: 'RouterExplorer' }, 'Mapped {/api/x, GET} route');
    expect(JSON.parse(debugLines[0])).toMatchObject({ level: 20, msg: 'Mapped {/api/x, GET} route' });
  });

  it('writes pretty single lines when asked (a terminal)', () => {
    const { lines, destination } = capture();
    createRootLogger('info', { pretty: true, destination }).warn({ context: 'BoardClaim' }, 'BOARD CLAIM: x');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/WARN.*BOARD CLAIM: x/);
    expect(() => JSON.parse(lines[0])).toThrow();
  });
});
