// SPDX-License-Identifier: MIT
// Private to profiling: the vector registers' upper halves cleared before a row or the drift
// control is timed on this thread.
#pragma once

namespace switchyard::detail {

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx"))) inline void zero_upper_unchecked() noexcept {
    __builtin_ia32_vzeroupper();
}
#endif

/// A kernel that returns with the upper halves of the vector registers dirty (no vzeroupper:
/// a plugin's, or GCC's own where an AVX function ends in a tail call) slows the SSE code run
/// after it on the same thread: a reference kernel once ran 3.5x as long after an AVX-512
/// row on a Zen 4 guest. Each row and each timing of the sentinel starts clean, so no row is
/// charged for the one before it. Nothing on a CPU without AVX.
inline void clear_vector_upper_state() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    static const bool avx = __builtin_cpu_supports("avx");
    if (avx)
        zero_upper_unchecked();
#endif
}

} // namespace switchyard::detail
