// Kernel dispatch: which variants are compiled in, which the CPU/OS can run, and the table in use.
// Compiled with the portable baseline flags (no AVX here). kernels_avx2/kernels_avx512 are only
// referenced on x86 builds (SABLE_HAVE_X86) and kernels_neon only on aarch64 builds
// (SABLE_HAVE_NEON); on other builds this file defines them to return nullptr, so every build links
// and kernels.h's "nullptr when not compiled into this build" holds.
#include <cstdlib>

#include "kernels.h"

#if SABLE_HAVE_X86
#include <cpuid.h>
#endif

namespace sable {

#if !SABLE_HAVE_X86
const KernelTable* kernels_avx2() { return nullptr; }
const KernelTable* kernels_avx512() { return nullptr; }
const KernelTable* kernels_avx512vnni() { return nullptr; }
#endif
#if !SABLE_HAVE_NEON
const KernelTable* kernels_neon() { return nullptr; }
#endif

namespace {

#if SABLE_HAVE_X86
struct X86Features {
  bool avx2 = false;
  bool avx512 = false;
  bool avx512vnni = false;  // AVX-512 (as above) plus VNNI
  bool avx512vpopcntdq = false;  // AVX-512 (as above) plus VPOPCNTDQ
  bool avx512bf16 = false;  // AVX-512 (as above) plus BF16
};

X86Features detect_x86() {
  X86Features f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, f16c = (c >> 29) & 1;
  if (!osxsave || !avx) return f;
  // XCR0: which register state the OS saves on context switch. xgetbv via asm, so this file needs
  // no -mxsave.
  unsigned xlo = 0, xhi = 0;
  __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
  const unsigned long long xcr0 = (static_cast<unsigned long long>(xhi) << 32) | xlo;
  const bool os_ymm = (xcr0 & 0x6) == 0x6;     // SSE (bit 1) + AVX upper halves (bit 2)
  const bool os_zmm = (xcr0 & 0xE0) == 0xE0;  // opmask (5), ZMM0-15 upper (6), ZMM16-31 (7)
  if (!os_ymm) return f;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const bool avx2 = (b >> 5) & 1;
  const bool avx512f = (b >> 16) & 1, avx512dq = (b >> 17) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
  f.avx2 = avx2 && fma && f16c;  // F16C: the f16 row kernels (every AVX2 CPU has it)
  f.avx512 = f.avx2 && os_zmm && avx512f && avx512dq && avx512bw && avx512vl;
  f.avx512vnni = f.avx512 && ((c >> 11) & 1);  // CPUID.(7,0):ECX bit 11
  f.avx512vpopcntdq = f.avx512 && ((c >> 14) & 1);  // CPUID.(7,0):ECX bit 14
  if (f.avx512 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512bf16 = (a >> 5) & 1;  // CPUID.(7,1):EAX bit 5
  return f;
}


const X86Features& x86() {
  static const X86Features f = detect_x86();
  return f;
}

// The AVX-512 table with the extensions this CPU has: VNNI code scoring, VPOPCNTDQ bit codes,
// the BF16 matrix product.
const KernelTable* avx512_table() {
  static const KernelTable table = [] {
    KernelTable t = *(x86().avx512vnni ? kernels_avx512vnni() : kernels_avx512());
    if (x86().avx512vpopcntdq) t.bits_dot_u4_batch = bits_dot_u4_batch_avx512vpopcntdq;
    if (x86().avx512bf16) t.gemm_bf16_panels = gemm_bf16_panels_avx512bf16;
    return t;
  }();
  return &table;
}
#endif

bool equals_ci(const char* s, const char* lit) {
  for (; *s && *lit; ++s, ++lit) {
    char ch = *s;
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    if (ch != *lit) return false;
  }
  return *s == 0 && *lit == 0;
}

const KernelTable* best_available() {
#if SABLE_HAVE_X86
  if (x86().avx512) return kernels_for(Isa::Avx512);
  if (x86().avx2) return kernels_avx2();
#endif
#if SABLE_HAVE_NEON
  return kernels_neon();
#endif
  return kernels_serial();
}

const KernelTable* choose() {
  if (const char* env = std::getenv("SABLE_SIMD"); env && *env) {
    const Isa all[] = {Isa::Serial, Isa::Avx2, Isa::Avx512, Isa::Neon};
    for (Isa isa : all) {
      if (equals_ci(env, isa_name(isa))) {
        if (const KernelTable* t = kernels_for(isa)) return t;
        break;  // named but unavailable here: fall back to the best available
      }
    }
  }
  return best_available();
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Serial: return "serial";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Neon: return "neon";
  }
  return "unknown";
}

bool isa_available(Isa isa) {
  switch (isa) {
    case Isa::Serial: return true;
#if SABLE_HAVE_X86
    case Isa::Avx2: return x86().avx2;
    case Isa::Avx512: return x86().avx512;
#endif
#if SABLE_HAVE_NEON
    case Isa::Neon: return true;  // Advanced SIMD is mandatory on aarch64
#endif
    default: return false;
  }
}

const KernelTable* kernels_for(Isa isa) {
  if (!isa_available(isa)) return nullptr;
  switch (isa) {
    case Isa::Serial: return kernels_serial();
#if SABLE_HAVE_X86
    case Isa::Avx2: return kernels_avx2();
    case Isa::Avx512: return avx512_table();
#endif
#if SABLE_HAVE_NEON
    case Isa::Neon: return kernels_neon();
#endif
    default: return nullptr;
  }
}

const KernelTable& active_kernels() {
  static const KernelTable* const table = choose();
  return *table;
}

}  // namespace sable
