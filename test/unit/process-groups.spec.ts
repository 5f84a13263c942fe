import { spawn } from 'node:child_process';
import { groupAlive, isRecordedGroup, localOwnerPid, processStartTicks, terminateGroup } from '../../src/common/process/process-groups';

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

  it('reads the pid of a lease owner of this host even when the hex suffix is all digits', () => {
    expect(localOwnerPid('vm-28346-278153', 'vm')).toBe(28346);
    expect(localOwnerPid('vm-28346-a1b2c3', 'vm')).toBe(28346);
    expect(localOwnerPid('vm-28346', 'vm')).toBe(28346);
    expect(localOwnerPid('my-host-7-0000ff', 'my-host')).toBe(7);
    expect(localOwnerPid('other-28346-278153', 'vm')).toBeNull();
    expect(localOwnerPid('vm-custom-name', 'vm')).toBeNull();
  });
});
