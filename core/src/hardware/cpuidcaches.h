// SPDX-License-Identifier: MIT
#pragma once
// Caches from AMD's CPUID leaves: the topology leaf 0x8000001D, and the legacy leaves
// 0x80000005 (L1d in ECX, L1i in EDX) and 0x80000006 (L2 in ECX, L3 in EDX), decoded from the
// register values alone (no CPUID here), so a test can feed any CPU's. hardware.cpp falls back to
// them where a VM hides cpu_features' caches and sysfs' (an Oxide Zen 5 guest: leaf 0x8000001D
// empty, no /sys/.../cpu0/cache).
#include <switchyard/hardware/hardware.h>

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::detail {

/// One cache of AMD's topology leaf 0x8000001D from its EAX, EBX, ECX at one subleaf; false
/// at the end of the list (type 0) or on a type it does not know.
inline bool cache_from_amd_topology_leaf(std::uint32_t a, std::uint32_t b, std::uint32_t c,
                                         CacheLevel& out) {
    const std::uint32_t type = a & 31u; // 1 data, 2 instruction, 3 unified; 0: no more
    if (type == 0 || type > 3)
        return false;
    out.level = int((a >> 5) & 7u);
    out.type = type == 1 ? "data" : type == 2 ? "instruction" : "unified";
    out.line_bytes = int((b & 0xfffu) + 1);
    out.ways = int(((b >> 22) & 0x3ffu) + 1);
    out.size_bytes = std::int64_t(out.line_bytes) * (((b >> 12) & 0x3ffu) + 1) * out.ways *
                     (std::int64_t(c) + 1);
    return true;
}

/// The legacy leaves say nothing of how many cores share the L3, and a hypervisor may put
/// the whole package's there (508 MiB on that Zen 5 guest, where one core's CCD holds 32 MiB,
/// as its working-set sweep shows). An L3 above kMaxSharedL3 (a 3D V-Cache CCD's) is taken
/// as kAssumedL3 (a Zen 2-5 CCD's), and `note` says so with the reported size.
inline constexpr std::int64_t kMaxSharedL3 = std::int64_t(96) << 20;
inline constexpr std::int64_t kAssumedL3 = std::int64_t(32) << 20;

/// The ways of 0x80000006's 4-bit associativity code (AMD APM vol. 3, CPUID Fn8000_0006):
/// 0 when disabled, fully associative or unknown (9: "see leaf 0x8000001D").
inline int amd_l2l3_ways(unsigned code) {
    static constexpr int ways[16] = {0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0};
    return ways[code & 15u];
}

inline std::vector<CacheLevel> caches_from_amd_legacy_leaves(std::uint32_t c5, std::uint32_t d5,
                                                             std::uint32_t c6, std::uint32_t d6,
                                                             std::string& note) {
    std::vector<CacheLevel> out;
    if (const std::int64_t kib = c5 >> 24; kib > 0)
        out.push_back({1, "data", kib << 10, int(c5 & 0xffu), int((c5 >> 16) & 0xffu)});
    if (const std::int64_t kib = d5 >> 24; kib > 0)
        out.push_back({1, "instruction", kib << 10, int(d5 & 0xffu), int((d5 >> 16) & 0xffu)});
    if (const std::int64_t kib = c6 >> 16; kib > 0)
        out.push_back({2, "unified", kib << 10, int(c6 & 0xffu), amd_l2l3_ways(c6 >> 12)});
    if (std::int64_t bytes = std::int64_t(d6 >> 18) * (512 << 10); bytes > 0) {
        if (bytes > kMaxSharedL3) {
            note = "CPUID reports a " + std::to_string(bytes >> 20) +
                   " MiB L3 (leaf 0x80000006) and no cache topology: more than any core shares "
                   "(a VM shows the package's); taken as " +
                   std::to_string(kAssumedL3 >> 20) +
                   " MiB, one CCD's. The working-set sweep (hardware --json, cpu_peaks.sweep) "
                   "shows where reads fall to memory speed";
            bytes = kAssumedL3;
        }
        out.push_back({3, "unified", bytes, int(d6 & 0xffu), amd_l2l3_ways(d6 >> 12)});
    }
    return out;
}

} // namespace switchyard::detail
