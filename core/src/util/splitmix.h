// SPDX-License-Identifier: MIT
#pragma once
// splitmix64: a small generator of our own, tiny, fast, and the same numbers on every
// platform and in every build (input data, bootstrap resamples, buffer placements).

#include <cstdint>

namespace switchyard {

/// The next number of the sequence `state` is at (and advances it).
inline std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

} // namespace switchyard
