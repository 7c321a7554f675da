// Cluster placement is pinned: every node, of every version, must route an id to the same shard.
import { describe, expect, it } from 'vitest';
import { murmur3x86_32, shardOf } from '../../dist/catalog/placement/shard-of.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('shard placement', () => {
  it('is MurmurHash3 x86 32-bit: the reference test vectors', () => {
    expect(murmur3x86_32(bytes(''), 0)).toBe(0);
    expect(murmur3x86_32(bytes(''), 1)).toBe(0x514e28b7);
    expect(murmur3x86_32(bytes(''), 0xffffffff)).toBe(0x81f16f39);
    expect(murmur3x86_32(new Uint8Array(4), 0)).toBe(0x2362f9de);
    expect(murmur3x86_32(bytes('a'), 0x9747b28c)).toBe(0x7fa09ea6);
    expect(murmur3x86_32(bytes('abc'), 0x9747b28c)).toBe(0xc84a62dd);
    expect(murmur3x86_32(bytes('aaaa'), 0x9747b28c)).toBe(0x5a97808a);
    expect(murmur3x86_32(bytes('Hello, world!'), 0x9747b28c)).toBe(0x24884cba);
    expect(murmur3x86_32(bytes('The quick brown fox jumps over the lazy dog'), 0x9747b28c)).toBe(0x2fa826cd);
  });

  it('routes ids to the same shards forever (golden values)', () => {
    const golden = [0, 1, 2, 42, 1000, 123456789, 2 ** 53 - 1, -7].map((id) => [id, shardOf(id, 16)]);
    expect(golden).toEqual(GOLDEN_16);
  });

  it('spreads ids evenly and refuses what is not an id or a shard count', () => {
    const counts = new Array<number>(8).fill(0);
    for (let id = 0; id < 80_000; id++) counts[shardOf(id, 8)]!++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500);
    expect(shardOf(5, 1)).toBe(0);
    expect(() => shardOf(1.5, 4)).toThrow(/safe integer/);
    expect(() => shardOf(1, 0)).toThrow(/at least 1/);
  });
});

// Computed once from the function the reference vectors above pin; never regenerate them.
const GOLDEN_16: number[][] = [[0, 15], [1, 3], [2, 7], [42, 6], [1000, 4], [123456789, 2], [2 ** 53 - 1, 5], [-7, 4]];
