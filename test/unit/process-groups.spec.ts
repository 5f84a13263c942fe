import { spawn } from 'node:child_process';
import { groupAlive, isRecordedGroup, processStartTicks, terminateGroup } from '../../src/common/process/process-groups';

describe('process groups', () => {
  it('knows a live group, matches its leader by start time, and terminates the whole group', async () => {
    const child = spawn('sh', ['-c', 'sleep 60 & wait'], { detached: true, stdio: 'ignore' });
    const pgid = child.pid as number;
    await new Promise((r) => setTimeout(r, 100));
    const ticks = processStartTicks(pgid);
    expect(ticks).toEqual(expect.any(Number));
    expect(groupAlive(pgid)).toBe(true);
    expect(isRecordedGroup(pgid, ticks)).toBe(true);
    expect(isRecordedGroup(pgid, (ticks as number) + 1)).toBe(false); // a recycled pid is not ours
    await terminateGroup(pgid, 1000);
    expect(groupAlive(pgid)).toBe(false);
    expect(isRecordedGroup(pgid, ticks)).toBe(false);
  });
});
