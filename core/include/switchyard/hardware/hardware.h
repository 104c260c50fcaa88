// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/device.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchyard {

/// One cache level as the CPU reports it.
struct SWITCHYARD_CORE_EXPORT CacheLevel {
    int level = 0;
    std::string type; // "data", "instruction", "unified"
    std::int64_t size_bytes = 0;
    int line_bytes = 0;
    int ways = 0;
};

/// The host CPU, detected through cpu_features; its caches from cpu_features, else sysfs, else
/// CPUID's cache leaves (a VM may hide the first two).
struct SWITCHYARD_CORE_EXPORT CpuInfo {
    std::string architecture; // "x86_64", "aarch64"
    std::string vendor;
    std::string brand;
    std::string microarchitecture; // cpu_features' name, e.g. "AMD_ZEN3"
    int family = 0, model = 0, stepping = 0;
    unsigned logical_cpus = 0;   // in this process's affinity mask
    unsigned physical_cores = 0; // distinct (package, core) pairs among them
    std::vector<CacheLevel> caches;
    std::string cache_source;            // where `caches` came from ("" when nothing reported any)
    std::string cache_note;              // what was assumed about them, and why ("" when nothing)
    std::vector<std::string> features;   // cpu_features names of what is present
    std::vector<std::string> isa_levels; // every level this CPU runs, e.g. x86-64-v2, x86-64-v3
    std::string best_level;              // the most specific one ("generic" if none)
    std::string isa_cap;                 // SWITCHYARD_MAX_ISA in force ("" when none)
    std::vector<std::string> detected_isa_levels; // what the CPU runs before the cap

    /// The largest data/unified cache (0 when unknown).
    std::int64_t last_level_cache_bytes() const;
    bool has_feature(std::string_view name) const;
    /// "x86-64-v2 x86-64-v3 (best: x86-64-v3)", and when a cap is in force
    /// "… (best: x86-64-v3, capped by SWITCHYARD_MAX_ISA; the CPU runs x86-64-v4)".
    std::string isa_summary() const;
    /// "L1d 48 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB", plus "(from …)" when the caches did not
    /// come from cpu_features, or "none reported (…)".
    std::string caches_summary() const;
    nlohmann::json to_json() const;
};

/// The machine and OS around the CPU, plus what makes a measurement suspect.
struct SWITCHYARD_CORE_EXPORT HostInfo {
    std::string hostname;
    std::string os;     // "Linux 6.1.0-18-amd64 #1 SMP ..."
    std::string distro; // PRETTY_NAME of /etc/os-release
    std::int64_t memory_bytes = 0;
    std::string governor;             // "performance", "powersave", "" when there is no cpufreq
    std::int64_t throttle_count = -1; // sum of the thermal throttle counters; -1 unknown
    nlohmann::json to_json() const;
};

/// CPUs in this process's affinity mask as first read (at least 1): a thread held on one CPU
/// for a 1-thread measurement does not narrow it.
SWITCHYARD_CORE_EXPORT unsigned cpus_in_affinity_mask();
/// The CPU numbers of that mask, ascending (empty where it cannot be read): the CPUs a
/// 1-thread measurement may be held on (SWITCHYARD_PIN_CPU, --pin-cpu).
SWITCHYARD_CORE_EXPORT std::vector<int> process_cpu_ids();
/// Why `value` cannot be SWITCHYARD_PIN_CPU's ("" when it can): "off" ("none"), or one of
/// process_cpu_ids(). For --pin-cpu, which refuses what the variable only warns about (both
/// are read by one reader).
SWITCHYARD_CORE_EXPORT std::string pin_cpu_value_error(std::string_view value);

/// Detected once per process.
SWITCHYARD_CORE_EXPORT const CpuInfo& cpu_info();

/// A device's free-form properties (DeviceInfo::properties) as (key, value as text), in key
/// order: a string as it is, anything else as its JSON text. For front ends that list them.
SWITCHYARD_CORE_EXPORT std::vector<std::pair<std::string, std::string>>
device_property_entries(const DeviceInfo& device);
/// Read afresh on every call (the governor and throttle counters change).
SWITCHYARD_CORE_EXPORT HostInfo host_info();
/// The machine's physical memory in bytes (sysconf); 0 when it cannot say. HostInfo's
/// memory_bytes, without the rest of host_info()'s reading.
SWITCHYARD_CORE_EXPORT std::int64_t physical_memory_bytes() noexcept;
/// How the kernel backs shared memory (a memfd) with transparent huge pages: the selected
/// word of /sys/kernel/mm/transparent_hugepage/shmem_enabled ("never", "advise", "always",
/// "within_size", "deny", "force"); "" when it cannot be read.
SWITCHYARD_CORE_EXPORT std::string shared_memory_huge_pages();

} // namespace switchyard
