// Distance kernels: free functions, one translation unit per instruction set, each compiled with
// its own flags. A table is chosen once at load (cpuid, or SABLE_SIMD=serial|avx2|avx512|neon).
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable {

enum class Isa : uint8_t { Serial = 0, Avx2 = 1, Avx512 = 2, Neon = 3 };
const char* isa_name(Isa isa);

// Arguments of the k-means panel tiles (KernelTable::argmin_f32_panels / knn_f32_panels).
// A panel holds W = KernelTable::panel_width rows transposed: panel[t * W + lane] = row[lane][t],
// zero padded, npanels x dim x W floats in all.
struct ArgminPanelsArgs {
  const float* x = nullptr;       // points, dim floats each
  size_t dim = 0;
  const float* panels = nullptr;  // centroid panels
  const float* pnorm = nullptr;   // npanels x W: ||c||^2 (l2) or 0 (spherical); +inf on padding lanes
  size_t npanels = 0;
  size_t panels_per_chunk = 1;    // panels visited by every point of the range before the next chunk
  uint32_t* labels = nullptr;     // per point: argmin of pnorm[c] - 2 <x, c>, ties to the lower index
  float* key = nullptr;           // per point: that minimum
};

struct KnnPanelsArgs {
  const float* x = nullptr;       // rows, dim floats each
  size_t dim = 0;
  const float* panels = nullptr;  // query panels
  size_t npanels = 0;
  size_t nq = 0;                  // queries (lanes past nq are padding)
  bool l2 = true;                 // key ||x||^2 - 2 <x, q> (l2) or -2 <x, q>
  // npanels x W: each query's current threshold; `candidate` is called for every (query, key, row)
  // with key < thr[query] and may lower thr[query]. Padding lanes must hold -inf.
  float* thr = nullptr;
  void (*candidate)(void* ctx, size_t q, float key, uint32_t row) = nullptr;
  void* ctx = nullptr;
};

// A matrix product tile (KernelTable::gemm_f32_panels): C = A * B^T + bias for rows [begin, end)
// of A, where B (n x k, a linear layer's weight) is packed in panels of W = panel_width of its rows,
// transposed like the centroid panels above (pack_panels in pack.h).
struct GemmPanelsArgs {
  const float* a = nullptr;       // m x k, row-major
  size_t k = 0;
  const float* panels = nullptr;  // ceil(n / W) panels of k x W floats
  const float* bias = nullptr;    // ceil(n / W) * W floats, zero padded
  size_t n = 0;
  float* c = nullptr;             // m x ldc, row-major; columns [0, n) written
  size_t ldc = 0;
};

// The bfloat16 matrix product tile (KernelTable::gemm_bf16_panels): C = A * B^T + bias as above,
// A and B rounded to bfloat16 (round to nearest even), products summed in float. A and B are
// stored as k2 = ceil(k / 2) pairs of bfloat16 (an odd k padded with a zero): a row of A is 2 * k2
// uint16 values, and B is packed by pack_bf16_panels (pack.h) into panels of W = panel_width rows
// whose uint32 entry [t * W + lane] holds row lane's values 2t (low half) and 2t + 1 (high half),
// the operand layout of AVX512-BF16's pairwise dot product.
struct GemmBf16PanelsArgs {
  const uint16_t* a = nullptr;    // m x 2 * k2 bfloat16, row-major
  size_t k2 = 0;
  const uint32_t* panels = nullptr;  // ceil(n / W) panels of k2 x W pairs
  const float* bias = nullptr;    // ceil(n / W) * W floats, zero padded
  size_t n = 0;
  float* c = nullptr;             // m x ldc, row-major; columns [0, n) written
  size_t ldc = 0;
};

// x rounded to bfloat16, to nearest even (NaN stays NaN): what VCVTNEPS2BF16 computes.
inline uint16_t bf16_of(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// The plain-loop bfloat16 tile, the reference the AVX512-BF16 variant is checked against.
void gemm_bf16_panels_reference(const GemmBf16PanelsArgs& a, size_t begin, size_t end);
// The AVX512-BF16 tile (kernels/gemm_avx512bf16.cpp, x86 builds only), for panels of width 32.
void gemm_bf16_panels_avx512bf16(const GemmBf16PanelsArgs& a, size_t begin, size_t end);

// SQ8 codes decode per dimension as x[i] = vmin[i] + scale[i] * code[i].
//
// Batched code scoring (the IVF scan and its coarse step): out[i] = <w, code_i> for i < count,
// code_i = codes + (sel ? sel[i] : i) * stride (any stride >= 1). The weights are padded: w (and
// hi, lo) hold round_up(stride, 64) entries, zero from index stride on; and every code may be read
// up to round_up(stride, 64) bytes from its start, so the code table needs 64 spare bytes at its
// end. Those extra lanes meet zero weights and add nothing.
struct KernelTable {
  Isa isa;
  float (*l2sq_f32)(const float* a, const float* b, size_t d);
  float (*ip_f32)(const float* a, const float* b, size_t d);
  // 1 - cos(a, b); 1 when either vector has zero norm.
  float (*cos_f32)(const float* a, const float* b, size_t d);
  // A float query against a row stored in half precision (the f16 row store).
  float (*l2sq_f16)(const float* q, const uint16_t* row, size_t d);
  float (*ip_f16)(const float* q, const uint16_t* row, size_t d);
  float (*l2sq_sq8)(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d);
  float (*ip_sq8)(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d);
  float (*cos_sq8)(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d);
  // out[i] = <w, code_i> in float.
  void (*dot_u8_f32_batch)(const float* w, const uint8_t* codes, size_t stride, const uint32_t* sel, size_t count,
                           float* out);
  // out[i] = s * <128 * hi + lo, code_i>, the integer dot product exact (it fits int32 up to stride
  // 512; longer codes sum 512-byte blocks in float), times s in float.
  void (*dot_u8_i8x2_batch)(const int8_t* hi, const int8_t* lo, float s, const uint8_t* codes, size_t stride,
                            const uint32_t* sel, size_t count, float* out);
  // dot_u8_i8x2_batch is the faster of the two here (AVX-512 VNNI): the IVF scan splits its
  // weights into int8 and uses it. Elsewhere it is a plain loop, there for the tests.
  bool prefer_i8x2;
  // Rows per panel of the k-means tiles below.
  uint32_t panel_width;
  // K-means assignment tile: labels/key of points [begin, end) (see ArgminPanelsArgs).
  void (*argmin_f32_panels)(const ArgminPanelsArgs& a, size_t begin, size_t end);
  // Exact k-NN tile: every row of [begin, end) against every query (see KnnPanelsArgs).
  void (*knn_f32_panels)(const KnnPanelsArgs& a, size_t begin, size_t end);
  // Matrix product tile: rows [begin, end) of C (see GemmPanelsArgs).
  void (*gemm_f32_panels)(const GemmPanelsArgs& a, size_t begin, size_t end);
  // x <- x * Phi(x) (the erf GELU) over n values, |error| < 2e-6 * max(1, |x|).
  void (*gelu_f32)(float* x, size_t n);
  // x <- softmax(x) over n values (relative error about 1e-6).
  void (*softmax_f32)(float* x, size_t n);
  // Bit codes against a 4-bit query (codes/bit_codes.h): out[i] = sum over k < 4 of
  // 2^k * popcount(code_i & planes[k]), code_i = codes + (sel ? sel[i] : i) * words 64-bit words,
  // planes 4 x words words (plane k holds bit k of every query coordinate).
  void (*bits_dot_u4_batch)(const uint64_t* planes, size_t words, const uint64_t* codes, const uint32_t* sel,
                            size_t count, uint32_t* out);
  // The bfloat16 matrix-product tile (see GemmBf16PanelsArgs), set only where the CPU computes
  // bfloat16 dot products natively (AVX512-BF16): elsewhere nullptr, and the model stays float32,
  // which is faster than bfloat16 emulated.
  void (*gemm_bf16_panels)(const GemmBf16PanelsArgs& a, size_t begin, size_t end);
  // The k-NN tile on panels of half the width (one register of lanes): a batch of few queries
  // (a search batch of one event-loop turn is often under 16) computes half the padding lanes.
  uint32_t narrow_panel_width;
  void (*knn_f32_panels_narrow)(const KnnPanelsArgs& a, size_t begin, size_t end);
  // n floats to half precision, rounded to nearest even as half.h's float_to_half is, bit for bit
  // (a NaN stays a NaN): the f16 row store narrows a partition's rows with it.
  void (*f32_to_f16)(const float* in, uint16_t* out, size_t n);
  // n halves widened to float, exactly.
  void (*f16_to_f32)(const uint16_t* in, float* out, size_t n);
};

// The plain-loop batch scorer (the compiler vectorises it with the baseline or NEON flags), shared
// by the serial and NEON tables.
void dot_u8_f32_batch_reference(const float* w, const uint8_t* codes, size_t stride, const uint32_t* sel, size_t count,
                                float* out);

// The plain int8 form of dot_u8_i8x2_batch, shared by every table whose ISA has no fast int8 dot
// product (only VNNI has one: vpmaddubsw saturates), compiled with the baseline flags.
void dot_u8_i8x2_batch_reference(const int8_t* hi, const int8_t* lo, float s, const uint8_t* codes, size_t stride,
                                 const uint32_t* sel, size_t count, float* out);

// The plain half conversions (half.h, value by value), shared by the serial and NEON tables.
void f32_to_f16_reference(const float* in, uint16_t* out, size_t n);
void f16_to_f32_reference(const uint16_t* in, float* out, size_t n);

// The plain form of bits_dot_u4_batch (std::popcount), shared by the serial and NEON tables.
void bits_dot_u4_batch_reference(const uint64_t* planes, size_t words, const uint64_t* codes, const uint32_t* sel,
                                 size_t count, uint32_t* out);
// The same with the x86 POPCNT instruction (distance_avx2.cpp), shared by the AVX2 and AVX-512 tables.
void bits_dot_u4_batch_popcnt(const uint64_t* planes, size_t words, const uint64_t* codes, const uint32_t* sel,
                              size_t count, uint32_t* out);

// The same with AVX512-VPOPCNTDQ (distance_avx512vpopcntdq.cpp, x86 builds only): dispatch.cpp
// puts it into the AVX-512 table when the CPU has that extension.
void bits_dot_u4_batch_avx512vpopcntdq(const uint64_t* planes, size_t words, const uint64_t* codes,
                                       const uint32_t* sel, size_t count, uint32_t* out);

// Each returns nullptr when that variant is not compiled into this build.
const KernelTable* kernels_serial();
const KernelTable* kernels_avx2();
const KernelTable* kernels_avx512();
// AVX-512 with the VNNI int8 code scoring (distance_avx512vnni.cpp); its isa is Isa::Avx512.
const KernelTable* kernels_avx512vnni();
const KernelTable* kernels_neon();

// True when the variant is compiled in and the CPU (and OS) can run it.
bool isa_available(Isa isa);
// The variant for `isa`, or nullptr when it is not available (for Avx512, with the VNNI code
// scoring and the VPOPCNTDQ bit-code scoring when the CPU has those extensions).
const KernelTable* kernels_for(Isa isa);
// The table in use, chosen once: SABLE_SIMD when set and available, else the best available.
const KernelTable& active_kernels();

}  // namespace sable
