// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/sdk/registries.h>

namespace switchyard {

/// Registers the built-in CPU kernel cells of the `cpu` backend into `r`:
/// for each op the scalar reference `(op, cpu, generic, reference)`, the portable
/// `generic/default` and `generic/threaded`, the AVX2+FMA `x86-64-v3/default` and
/// `x86-64-v3/threaded` (available only where the CPU runs x86-64-v3), the AVX-512
/// `x86-64-v4/default` and `x86-64-v4/threaded` (only where it runs x86-64-v4), and
/// `(gemm, cpu, generic, openblas)` when built with OpenBLAS.
void register_cpu_cells(CellRegistrar& r);

/// True when this CPU (and OS) can run the x86-64-v3 (AVX2+FMA) kernels.
bool cpu_supports_x86_64_v3() noexcept;
/// True when this CPU (and OS) can run the x86-64-v4 (AVX-512F/BW/VL) kernels.
bool cpu_supports_x86_64_v4() noexcept;

} // namespace switchyard
