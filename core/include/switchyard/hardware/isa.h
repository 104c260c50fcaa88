// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// The one ISA level detector (cpu_features; the OS's saved-state bits included).
/// Levels, most specific last: x86-64 `x86-64-v2`, `x86-64-v3`, `x86-64-v4`;
/// aarch64 `neon`, `sve`. Every CPU runs `generic`, which is not listed.
///
/// `SWITCHYARD_MAX_ISA` (read once, before the first detection) caps what is reported:
/// with `x86-64-v3` an AVX-512 machine reports v2 and v3 only, so dispatch, the kernels'
/// availability and the probes behave as on a v3 machine. A cap above what the CPU runs
/// changes nothing; `generic` reports no level at all.
SWITCHYARD_CORE_EXPORT const std::vector<std::string>& cpu_isa_levels();
/// The most specific level this CPU runs ("generic" when none).
SWITCHYARD_CORE_EXPORT const std::string& cpu_best_isa_level();
/// Whether this CPU runs `level` ("generic" always; an unknown level never).
SWITCHYARD_CORE_EXPORT bool cpu_supports(std::string_view level) noexcept;

/// The cap in force, as read from `SWITCHYARD_MAX_ISA` when levels were first detected.
struct SWITCHYARD_CORE_EXPORT IsaCap {
    std::string requested;             // the variable's value ("" when unset)
    std::string level;                 // the cap applied ("" when none)
    std::string error;                 // why `requested` was refused ("" when it was not)
    std::vector<std::string> detected; // what the CPU runs, before the cap
};
SWITCHYARD_CORE_EXPORT const IsaCap& cpu_isa_cap();

/// The levels a cap may name on this architecture, least specific first ("generic" first).
SWITCHYARD_CORE_EXPORT std::vector<std::string> isa_cap_choices();
/// "" when `value` is a level a cap may name, else a message that names `name` (the variable,
/// or the option that was typed: "--max-isa"), the close levels and what is accepted.
SWITCHYARD_CORE_EXPORT std::string validate_isa_cap(std::string_view value,
                                                    std::string_view name = "SWITCHYARD_MAX_ISA");

} // namespace switchyard
