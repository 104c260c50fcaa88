// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>
#include <switchyard/sdk/registries.h>

#include <cstddef>
#include <cstdint>

namespace switchyard {

// Exported though private: the kernel suites and bench_kernels register the CPU cells into a
// registrar of their own and check them against the CPU's level.

/// Registers the built-in CPU kernel cells of the `cpu` backend into `r`:
/// for each op the scalar reference `(op, cpu, generic, reference)`, the portable
/// `generic/default` and `generic/threaded`, the AVX2+FMA `x86-64-v3/default` and
/// `x86-64-v3/threaded` (available only where the CPU runs x86-64-v3), the AVX-512
/// `x86-64-v4/default` and `x86-64-v4/threaded` (only where it runs x86-64-v4), and
/// `(gemm, cpu, generic, openblas)` when built with OpenBLAS.
SWITCHYARD_CORE_EXPORT void register_cpu_cells(CellRegistrar& r);

/// True when this CPU (and OS) can run the x86-64-v3 (AVX2+FMA) kernels.
SWITCHYARD_CORE_EXPORT bool cpu_supports_x86_64_v3() noexcept;
/// True when this CPU (and OS) can run the x86-64-v4 (AVX-512F/BW/VL) kernels.
SWITCHYARD_CORE_EXPORT bool cpu_supports_x86_64_v4() noexcept;

/// The CPU read probe's pass over x[0, n) with the loads of `isa` (4: AVX-512, 3: AVX2,
/// anything else: the portable loop; the caller checks the CPU runs it): every float read
/// once, their sum returned (kept, so the loads are not removed).
SWITCHYARD_CORE_EXPORT double cpu_read_probe(int isa, std::int64_t n, const float* x);

/// The CPU copy probe's pass: a[i] = 0.5 b[i] for i in [0, n), with the loads and stores of
/// `form`'s ISA (form % 10 as cpu_read_probe's `isa`), non-temporal where form % 100 >= 10,
/// in two lanes (the halves side by side) from form 100 on (SIMD ISAs only).
SWITCHYARD_CORE_EXPORT void cpu_copy_probe(int form, std::int64_t n, float* a, const float* b);

/// Host memory for the CPU device's buffers and the probes' working sets: 64-byte
/// aligned, and from 4 MiB on a fresh mapping, 2 MiB aligned and advised (madvise
/// MADV_HUGEPAGE) before its first touch to be backed by transparent huge pages (never
/// recycled heap memory that is already on 4 KiB pages). A streaming kernel takes a TLB miss every
/// 4 KiB of each array it walks; on 2 MiB pages flow_match_step moved ~12 % more from DRAM. The
/// probes use the same allocator, so a ceiling and the rows judged by it see the same
/// page size. The advice is ignored where THP is off ("never"). Free with host_release.
SWITCHYARD_CORE_EXPORT void* host_allocate(std::size_t bytes);
SWITCHYARD_CORE_EXPORT void host_release(void* buffer) noexcept;

} // namespace switchyard
