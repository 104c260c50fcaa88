// SPDX-License-Identifier: MIT
#include <switchyard/hardware/isa.h>

#include <cpu_features_macros.h>
#if defined(CPU_FEATURES_ARCH_X86)
#include <cpuinfo_x86.h>
#elif defined(CPU_FEATURES_ARCH_AARCH64)
#include <cpuinfo_aarch64.h>
#endif

#include "util/difflib.h"
#include "util/textutil.h"

#include <algorithm>
#include <cstdlib>

namespace switchyard {

namespace {

std::vector<std::string> detect_levels() {
    std::vector<std::string> levels;
#if defined(CPU_FEATURES_ARCH_X86)
    // cpu_features clears avx/avx2/avx512 when the OS does not save their state (XCR0).
    const cpu_features::X86Features f = cpu_features::GetX86Info().features;
    const bool v2 = f.cx16 && f.popcnt && f.sse3 && f.ssse3 && f.sse4_1 && f.sse4_2;
    const bool v3 = v2 && f.avx && f.avx2 && f.bmi1 && f.bmi2 && f.f16c && f.fma3 && f.movbe;
    const bool v4 = v3 && f.avx512f && f.avx512bw && f.avx512cd && f.avx512dq && f.avx512vl;
    if (v2)
        levels.emplace_back("x86-64-v2");
    if (v3)
        levels.emplace_back("x86-64-v3");
    if (v4)
        levels.emplace_back("x86-64-v4");
#elif defined(CPU_FEATURES_ARCH_AARCH64)
    const cpu_features::Aarch64Features f = cpu_features::GetAarch64Info().features;
    if (f.asimd)
        levels.emplace_back("neon");
    if (f.sve)
        levels.emplace_back("sve");
#endif
    return levels;
}

IsaCap read_cap() {
    IsaCap cap;
    cap.detected = detect_levels();
    const char* env = std::getenv("SWITCHYARD_MAX_ISA");
    cap.requested = env ? env : "";
    if (cap.requested.empty())
        return cap;
    cap.error = validate_isa_cap(cap.requested);
    if (cap.error.empty())
        cap.level = cap.requested;
    return cap;
}

} // namespace

std::vector<std::string> isa_cap_choices() {
#if defined(CPU_FEATURES_ARCH_AARCH64)
    return {"generic", "neon", "sve"};
#else
    return {"generic", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
#endif
}

std::string validate_isa_cap(std::string_view value, std::string_view name) {
    const auto choices = isa_cap_choices();
    if (std::find(choices.begin(), choices.end(), value) != choices.end())
        return {};
    // An option reads "--max-isa 'v5'", a variable "SWITCHYARD_MAX_ISA='v5'".
    std::string msg = std::string(name) + (name.starts_with("-") ? " '" : "='") +
                      text::untrusted(value) + "' is not an ISA level;";
    if (const auto close = difflib::get_close_matches(value, choices); !close.empty())
        msg += " did you mean " + text::join(close, " or ", text::quoted) + "?";
    msg += " use one of";
    for (const auto& c : choices)
        msg += " " + c;
    msg += " (or leave it unset)";
    return msg;
}

const IsaCap& cpu_isa_cap() {
    static const IsaCap cap = read_cap();
    return cap;
}

const std::vector<std::string>& cpu_isa_levels() {
    static const std::vector<std::string> levels = [] {
        const IsaCap& cap = cpu_isa_cap();
        if (cap.level.empty())
            return cap.detected;
        // The ladder is ordered, so the cap keeps the detected levels up to its own rung.
        const auto choices = isa_cap_choices();
        const auto rung = std::find(choices.begin(), choices.end(), cap.level) - choices.begin();
        std::vector<std::string> kept;
        for (const auto& l : cap.detected)
            if (std::find(choices.begin(), choices.end(), l) - choices.begin() <= rung)
                kept.push_back(l);
        return kept;
    }();
    return levels;
}

const std::string& cpu_best_isa_level() {
    static const std::string best =
        cpu_isa_levels().empty() ? std::string("generic") : cpu_isa_levels().back();
    return best;
}

bool cpu_supports(std::string_view level) noexcept {
    if (level == "generic")
        return true;
    const auto& levels = cpu_isa_levels();
    return std::find(levels.begin(), levels.end(), level) != levels.end();
}

} // namespace switchyard
