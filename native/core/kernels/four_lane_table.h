// The table entries the serial and NEON variants share: the panel tiles and element-wise kernels
// over 4-float vectors (8 rows a panel), and the plain-loop batch and bit-code scorers. Included
// by distance_serial.cpp and distance_neon.cpp only, so the tiles compile with that file's flags
// (the portable baseline or NEON); internal linkage, like panels.h.
#pragma once
#include "kernels.h"
#include "panels.h"
#include "elementwise.h"

namespace sable {
namespace {

// The entries each of the two files has its own of.
struct DistanceKernels {
  decltype(KernelTable::l2sq_f32) l2sq_f32;
  decltype(KernelTable::ip_f32) ip_f32;
  decltype(KernelTable::cos_f32) cos_f32;
  decltype(KernelTable::l2sq_f16) l2sq_f16;
  decltype(KernelTable::ip_f16) ip_f16;
  decltype(KernelTable::l2sq_sq8) l2sq_sq8;
  decltype(KernelTable::ip_sq8) ip_sq8;
  decltype(KernelTable::cos_sq8) cos_sq8;
};

constexpr KernelTable four_lane_table(Isa isa, const DistanceKernels& d) {
  return {
      .isa = isa,
      .l2sq_f32 = d.l2sq_f32,
      .ip_f32 = d.ip_f32,
      .cos_f32 = d.cos_f32,
      .l2sq_f16 = d.l2sq_f16,
      .ip_f16 = d.ip_f16,
      .l2sq_sq8 = d.l2sq_sq8,
      .ip_sq8 = d.ip_sq8,
      .cos_sq8 = d.cos_sq8,
      .dot_u8_f32_batch = dot_u8_f32_batch_reference,
      .dot_u8_i8x2_batch = dot_u8_i8x2_batch_reference,
      .prefer_i8x2 = false,
      .panel_width = 8,
      .argmin_f32_panels = argmin_panels<v4f, 2, 4>,
      .knn_f32_panels = knn_panels<v4f, 2, 4>,
      .gemm_f32_panels = gemm_panels<v4f, 2, 4>,
      .gelu_f32 = gelu_lanes<v4f>,
      .softmax_f32 = softmax_lanes<v4f>,
      .bits_dot_u4_batch = bits_dot_u4_batch_reference,
      .gemm_bf16_panels = nullptr,
      .narrow_panel_width = 4,
      .knn_f32_panels_narrow = knn_panels<v4f, 1, 8>,
      .f32_to_f16 = f32_to_f16_reference,
      .f16_to_f32 = f16_to_f32_reference,
  };
}

}  // namespace
}  // namespace sable
