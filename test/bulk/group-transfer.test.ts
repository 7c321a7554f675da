// A row group decoded by group.ts crosses to another thread by transfer: groupTransferables
// names every buffer behind the group once, so posting with it moves them (the sender's arrays
// are left empty) and the receiver gets the same values, with and without an id column and with
// nulls in a metadata column.
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { parquetBytes, type VectorBatch } from '../../dist/testkit/parquet-writer.js';
import { groupData, groupTransferables, type GroupData } from '../../dist/bulk/parquet/group.js';
import { shapeOf } from '../../dist/bulk/parquet/shape.js';

const DIM = 8;
const ROWS = 50;

function decoded(withIds: boolean): GroupData {
  const vectors = Float32Array.from({ length: ROWS * DIM }, (_, i) => Math.sin(i));
  const batch: VectorBatch = {
    ids: withIds ? BigInt64Array.from({ length: ROWS }, (_, r) => BigInt(1000 + r)) : null,
    vectors,
    dim: DIM,
    metadata: {
      score: Float64Array.from({ length: ROWS }, (_, r) => r / 4),
      label: Array.from({ length: ROWS }, (_, r) => (r % 5 === 0 ? null : `l${r % 3}`)),
      flag: Array.from({ length: ROWS }, (_, r) => r % 2 === 0),
    },
  };
  const table = arrow.tableFromIPC(pq.readParquet(parquetBytes([batch])).intoIPCStream());
  const shape = shapeOf(table.schema, ROWS, [ROWS], DIM, false);
  return groupData(table, shape, DIM, 0);
}

/** A deep copy made before the post (the transfer empties the sender's arrays). */
function copy(g: GroupData): GroupData {
  return structuredClone(g);
}

describe('groupTransferables', () => {
  for (const withIds of [true, false]) {
    it(`moves every array of a group ${withIds ? 'with' : 'without'} an id column`, () => {
      const group = decoded(withIds);
      const before = copy(group);
      const list = groupTransferables(group);
      expect(new Set(list).size).toBe(list.length);
      expect(before.metadata.some((m) => m.valid)).toBe(true);

      const { port1, port2 } = new MessageChannel();
      port1.postMessage({ group }, list);
      const got = receiveMessageOnPort(port2)!.message as { group: GroupData };
      port1.close();

      expect(got.group).toEqual(before);
      // Moved, not copied: nothing is left behind on the sending side.
      expect(group.vectors.length).toBe(0);
      expect(group.ids.length).toBe(0);
      for (const m of group.metadata) {
        if (m.numbers) expect(m.numbers.length).toBe(0);
        if (m.valid) expect(m.valid.length).toBe(0);
      }
    });
  }
});
