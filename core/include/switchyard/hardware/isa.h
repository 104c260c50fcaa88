// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// The one ISA level detector (cpu_features; the OS's saved-state bits included).
/// Levels, most specific last: x86-64 `x86-64-v2`, `x86-64-v3`, `x86-64-v4`;
/// aarch64 `neon`, `sve`. Every CPU runs `generic`, which is not listed.
const std::vector<std::string>& cpu_isa_levels();
/// The most specific level this CPU runs ("generic" when none).
const std::string& cpu_best_isa_level();
/// Whether this CPU runs `level` ("generic" always; an unknown level never).
bool cpu_supports(std::string_view level) noexcept;

} // namespace switchyard
