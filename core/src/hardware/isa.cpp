// SPDX-License-Identifier: MIT
#include <switchyard/hardware/isa.h>

#include <cpu_features_macros.h>
#if defined(CPU_FEATURES_ARCH_X86)
#include <cpuinfo_x86.h>
#elif defined(CPU_FEATURES_ARCH_AARCH64)
#include <cpuinfo_aarch64.h>
#endif

#include <algorithm>

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

} // namespace

const std::vector<std::string>& cpu_isa_levels() {
    static const std::vector<std::string> levels = detect_levels();
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
