// The shared read behind the catalog's read barrier and the router's shard map: callers share
// reads, yet none gets a read that began before its call.
import { describe, expect, it } from 'vitest';
import { Coalesced } from '../../dist/cluster/coalesced.js';

/** A read that records when it began (a counter) and ends when the test says. */
function controlledReads() {
  let began = 0;
  const ends: ((fail?: Error) => void)[] = [];
  const read = () =>
    new Promise<number>((resolve, reject) => {
      const n = ++began;
      ends.push((fail) => (fail ? reject(fail) : resolve(n)));
    });
  return { read, ends, began: () => began };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('Coalesced', () => {
  it('gives each caller a read begun after its call, shared by the callers that waited together', async () => {
    const c = controlledReads();
    const shared = new Coalesced(c.read);
    const first = shared.next();
    expect(c.began()).toBe(1);
    // Arrived while read 1 is in flight: they must not take it; they share read 2.
    const second = shared.next();
    const third = shared.next();
    expect(c.began()).toBe(1);
    c.ends[0]!();
    expect(await first).toBe(1);
    await tick();
    expect(c.began()).toBe(2);
    // Arrived while read 2 is in flight: read 3.
    const fourth = shared.next();
    c.ends[1]!();
    expect(await second).toBe(2);
    expect(await third).toBe(2);
    await tick();
    c.ends[2]!();
    expect(await fourth).toBe(3);
    expect(c.began()).toBe(3);
  });

  it('a failed read fails its own callers only; the next caller gets a new read', async () => {
    const c = controlledReads();
    const shared = new Coalesced(c.read);
    const failing = shared.next();
    const queued = shared.next();
    c.ends[0]!(new Error('database away'));
    await expect(failing).rejects.toThrow('database away');
    await tick();
    c.ends[1]!();
    expect(await queued).toBe(2);
    const later = shared.next();
    c.ends[2]!();
    expect(await later).toBe(3);
  });
});
