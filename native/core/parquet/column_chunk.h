// One Parquet column chunk decoded into flat buffers: the values (non-null ones only, in order),
// the definition and repetition levels, and for BYTE_ARRAY the values' offsets. Scoped to what
// vector files hold: FLOAT, DOUBLE, INT32, INT64, BOOLEAN and BYTE_ARRAY leaves; PLAIN and
// dictionary encodings (and the delta ones v2 writers fall back to); v1 and v2 data pages;
// UNCOMPRESSED, SNAPPY, and ZSTD and GZIP through the system's libraries opened at first use.
// Anything else is refused with Error(unsupported) so the caller can fall back to a general
// decoder; malformed data is refused with Error(invalid_argument). Nothing is allocated past
// `limit_bytes`.
#pragma once
#include <cstddef>
#include <cstdint>

#include "owned_bytes.h"

namespace sable::parquet {

// Parquet's Type enum.
enum class Physical : int32_t { boolean = 0, int32 = 1, int64 = 2, int96 = 3, float32 = 4, float64 = 5, byte_array = 6, fixed_len_byte_array = 7 };

// Parquet's CompressionCodec enum.
enum class Codec : int32_t { uncompressed = 0, snappy = 1, gzip = 2, lzo = 3, brotli = 4, lz4 = 5, zstd = 6, lz4_raw = 7 };

// What the footer's ColumnMetaData and schema say of the chunk.
struct ChunkSpec {
  int32_t physical = -1;
  int32_t codec = -1;
  int32_t max_def = 0;
  int32_t max_rep = 0;
  // ColumnMetaData.num_values: level entries (rows' values, nulls included).
  int64_t num_values = 0;
  // ColumnMetaData.total_uncompressed_size: page headers and uncompressed page bodies.
  int64_t uncompressed_size = 0;
  int32_t type_length = 0;
  // The caller's ceiling on what decoding this chunk may allocate, all buffers together.
  uint64_t limit_bytes = 0;
};

struct DecodedChunk {
  uint64_t levels = 0;  // level entries (== num_values)
  uint64_t values = 0;  // non-null values
  // Fixed-width values (BOOLEAN as one byte each), or BYTE_ARRAY's bytes end to end.
  OwnedBytes data;
  // BYTE_ARRAY only: values + 1 int32 offsets into `data`.
  OwnedBytes offsets;
  // One byte per level entry; empty when the chunk's max level is 0.
  OwnedBytes def;
  OwnedBytes rep;
  // Summaries that spare the caller a pass over millions of entries. Records: level entries
  // with repetition level 0 (all of them when the max is 0).
  uint64_t records = 0;
  // When every record has the same number of level entries, that number; else -1.
  int64_t record_length = -1;
  // FLOAT: the index of the first NaN or infinite value; else -1 (and for every other type).
  int64_t first_non_finite = -1;
};

DecodedChunk decode_column_chunk(const uint8_t* chunk, size_t size, const ChunkSpec& spec);

}  // namespace sable::parquet
