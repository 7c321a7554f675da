// Distance kernels: free functions, one translation unit per instruction set, each compiled with
// its own flags. A table is chosen once at load (cpuid, or SABLE_SIMD=serial|avx2|avx512|neon).
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable {

enum class Isa : uint8_t { Serial = 0, Avx2 = 1, Avx512 = 2, Neon = 3 };
const char* isa_name(Isa isa);

// SQ8 codes decode per dimension as x[i] = vmin[i] + scale[i] * code[i].
struct KernelTable {
  Isa isa;
  float (*l2sq_f32)(const float* a, const float* b, size_t d);
  float (*ip_f32)(const float* a, const float* b, size_t d);
  // 1 - cos(a, b); 1 when either vector has zero norm.
  float (*cos_f32)(const float* a, const float* b, size_t d);
  float (*l2sq_sq8)(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d);
  float (*ip_sq8)(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d);
  float (*cos_sq8)(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d);
};

// Each returns nullptr when that variant is not compiled into this build.
const KernelTable* kernels_serial();
const KernelTable* kernels_avx2();
const KernelTable* kernels_avx512();
const KernelTable* kernels_neon();

// True when the variant is compiled in and the CPU (and OS) can run it.
bool isa_available(Isa isa);
// The variant for `isa`, or nullptr when it is not available.
const KernelTable* kernels_for(Isa isa);
// The table in use, chosen once: SABLE_SIMD when set and available, else the best available.
const KernelTable& active_kernels();

}  // namespace sable
