// SPDX-License-Identifier: MIT
// Compiled with -mavx2 -mfma (core/CMakeLists.txt). Nothing here may run before
// cpukernels.cpp's runtime check has confirmed an x86-64-v3 CPU. The kernels themselves are
// simdvariants.h's, over the 256-bit traits of simd256.h.
#include "kernels/simd256.h"

namespace switchyard::cpu::avx2 {

using V = simd::V256;

SWITCHYARD_SIMD_ENTRY_POINTS(V, V)

} // namespace switchyard::cpu::avx2
