// SPDX-License-Identifier: MIT
#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/sdkjson.h>

#include <switchyard/hardware/isa.h>

#include "hardware/affinity.h"
#include "hardware/cpuidcaches.h"
#include "util/textutil.h"

#include <cpu_features_macros.h>
#if defined(CPU_FEATURES_ARCH_X86)
#include <cpuinfo_x86.h>
#elif defined(CPU_FEATURES_ARCH_AARCH64)
#include <cpuinfo_aarch64.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace switchyard {

namespace fs = std::filesystem;

namespace {

using text::read_first_line;

std::int64_t parse_size(const std::string& s) { // "32768K", "1M", "512"
    if (s.empty())
        return 0;
    std::int64_t mult = 1;
    std::string digits = s;
    const char last = s.back();
    if (last == 'K')
        mult = 1024;
    else if (last == 'M')
        mult = 1024 * 1024;
    if (mult != 1)
        digits.pop_back();
    try {
        return std::stoll(digits) * mult;
    } catch (...) {
        return 0;
    }
}

// Caches from sysfs, for CPUs where cpu_features reports none.
std::vector<CacheLevel> sysfs_caches() {
    std::vector<CacheLevel> out;
    const fs::path base = "/sys/devices/system/cpu/cpu0/cache";
    std::error_code ec;
    for (int i = 0; i < 16; ++i) {
        const fs::path dir = base / ("index" + std::to_string(i));
        if (!fs::exists(dir, ec))
            break;
        CacheLevel c;
        c.level = std::atoi(read_first_line(dir / "level").c_str());
        const auto type = read_first_line(dir / "type");
        c.type = type == "Data" ? "data" : type == "Instruction" ? "instruction" : "unified";
        c.size_bytes = parse_size(read_first_line(dir / "size"));
        c.line_bytes = std::atoi(read_first_line(dir / "coherency_line_size").c_str());
        c.ways = std::atoi(read_first_line(dir / "ways_of_associativity").c_str());
        out.push_back(c);
    }
    return out;
}

#if defined(__x86_64__) || defined(__i386__)
// Caches from CPUID itself, for a VM that shows neither cpu_features (0.7 reads leaf 4, which
// AMD leaves empty, and leaf 0x8000001D only on CPUs it knows) nor sysfs a cache: AMD's
// cache topology leaf 0x8000001D where it has entries, else its legacy leaves
// (cpuidcaches.h).
std::vector<CacheLevel> cpuid_caches(std::string& source, std::string& note) {
    std::vector<CacheLevel> out;
    unsigned a = 0, b = 0, c = 0, d = 0;
    const unsigned max_leaf = __get_cpuid_max(0x80000000u, nullptr);
    if (max_leaf < 0x80000006u)
        return out;
    CacheLevel level;
    for (unsigned i = 0; max_leaf >= 0x8000001Du && i < 8; ++i) {
        __cpuid_count(0x8000001Du, i, a, b, c, d);
        if (!detail::cache_from_amd_topology_leaf(a, b, c, level))
            break;
        out.push_back(level);
    }
    if (!out.empty()) {
        source = "CPUID leaf 0x8000001D";
        return out;
    }
    unsigned c5 = 0, d5 = 0;
    __cpuid(0x80000005u, a, b, c5, d5);
    __cpuid(0x80000006u, a, b, c, d);
    out = detail::caches_from_amd_legacy_leaves(c5, d5, c, d, note);
    if (!out.empty())
        source = "CPUID leaves 0x80000005/0x80000006";
    return out;
}
#endif

unsigned count_physical_cores() {
    // The process's CPUs (detail::process_cpus()), not the calling thread's: cpu_info() first
    // asked from a thread held on one CPU for a 1-thread measurement would count one core.
    std::set<std::pair<std::string, std::string>> cores;
    for (const int cpu : detail::process_cpus()) {
        const fs::path topo = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology";
        const auto core = read_first_line(topo / "core_id");
        const auto pkg = read_first_line(topo / "physical_package_id");
        if (core.empty())
            return 0;
        cores.insert({pkg, core});
    }
    return unsigned(cores.size());
}

CpuInfo detect_cpu() {
    CpuInfo c;
    c.logical_cpus = cpus_in_affinity_mask();
    c.physical_cores = count_physical_cores();
    if (c.physical_cores == 0)
        c.physical_cores = c.logical_cpus;
#if defined(CPU_FEATURES_ARCH_X86)
    using namespace cpu_features;
    c.architecture = "x86_64";
    const X86Info info = GetX86Info();
    c.vendor = info.vendor;
    c.brand = info.brand_string;
    c.family = info.family;
    c.model = info.model;
    c.stepping = info.stepping;
    c.microarchitecture = GetX86MicroarchitectureName(GetX86Microarchitecture(&info));
    for (int f = 0; f < X86_LAST_; ++f)
        if (GetX86FeaturesEnumValue(&info.features, X86FeaturesEnum(f)))
            c.features.emplace_back(GetX86FeaturesEnumName(X86FeaturesEnum(f)));
    const CacheInfo ci = GetX86CacheInfo();
    for (int i = 0; i < ci.size; ++i) {
        const auto& l = ci.levels[i];
        if (l.cache_type != CPU_FEATURE_CACHE_DATA &&
            l.cache_type != CPU_FEATURE_CACHE_INSTRUCTION &&
            l.cache_type != CPU_FEATURE_CACHE_UNIFIED)
            continue;
        c.caches.push_back({l.level,
                            l.cache_type == CPU_FEATURE_CACHE_DATA          ? "data"
                            : l.cache_type == CPU_FEATURE_CACHE_INSTRUCTION ? "instruction"
                                                                            : "unified",
                            l.cache_size, l.line_size, l.ways});
    }
#elif defined(CPU_FEATURES_ARCH_AARCH64)
    using namespace cpu_features;
    c.architecture = "aarch64";
    const Aarch64Info info = GetAarch64Info();
    c.vendor = std::to_string(info.implementer);
    for (int f = 0; f < AARCH64_LAST_; ++f)
        if (GetAarch64FeaturesEnumValue(&info.features, Aarch64FeaturesEnum(f)))
            c.features.emplace_back(GetAarch64FeaturesEnumName(Aarch64FeaturesEnum(f)));
#endif
    if (!c.caches.empty())
        c.cache_source = "cpu_features";
    if (c.caches.empty()) {
        c.caches = sysfs_caches();
        if (!c.caches.empty())
            c.cache_source = "sysfs (/sys/devices/system/cpu/cpu0/cache)";
    }
#if defined(__x86_64__) || defined(__i386__)
    if (c.caches.empty())
        c.caches = cpuid_caches(c.cache_source, c.cache_note);
#endif
    if (c.brand.empty()) {
        std::ifstream in("/proc/cpuinfo");
        for (std::string line; std::getline(in, line);)
            if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
                c.brand = line.substr(line.find(':') + 2);
                break;
            }
    }
    c.isa_levels = cpu_isa_levels();
    c.best_level = cpu_best_isa_level();
    c.isa_cap = cpu_isa_cap().level;
    c.detected_isa_levels = cpu_isa_cap().detected;
    return c;
}

} // namespace

std::vector<int> process_cpu_ids() {
    return detail::process_cpus();
}

std::string pin_cpu_value_error(std::string_view value) {
    return detail::read_pin_value(value).problem;
}

unsigned cpus_in_affinity_mask() {
    // The process's mask as first read, not the calling thread's: a thread held on one CPU
    // for a 1-thread measurement (detail::ScopedCpuPin) would otherwise size the pool at 1.
    if (const auto n = detail::process_cpus().size(); n > 0)
        return unsigned(n);
    const unsigned hc = std::thread::hardware_concurrency();
    return hc ? hc : 1;
}

std::int64_t CpuInfo::last_level_cache_bytes() const {
    std::int64_t best = 0;
    int best_level = 0;
    for (const auto& c : caches)
        if (c.type != "instruction" && c.level >= best_level) {
            best_level = c.level;
            best = c.size_bytes;
        }
    return best;
}

bool CpuInfo::has_feature(std::string_view name) const {
    return std::find(features.begin(), features.end(), name) != features.end();
}

std::string CpuInfo::isa_summary() const {
    std::string out = text::join(isa_levels, " ");
    out += (out.empty() ? "(best: " : " (best: ") + best_level;
    if (!isa_cap.empty() && detected_isa_levels != isa_levels)
        out += ", capped by SWITCHYARD_MAX_ISA; the CPU runs " +
               (detected_isa_levels.empty() ? std::string("generic") : detected_isa_levels.back());
    return out + ")";
}

std::string CpuInfo::caches_summary() const {
    std::string out;
    for (const auto& c : caches) {
        const std::int64_t mib = std::int64_t(1) << 20;
        out += (out.empty() ? "L" : ", L") + std::to_string(c.level) +
               (c.type == "data"          ? "d"
                : c.type == "instruction" ? "i"
                                          : "") +
               " " +
               (c.size_bytes >= mib ? std::to_string(c.size_bytes / mib) + " MiB"
                                    : std::to_string(c.size_bytes >> 10) + " KiB");
    }
    if (out.empty())
        return "none reported (no CPUID cache leaf, no sysfs cache directory)";
    if (!cache_source.empty() && cache_source != "cpu_features")
        out += " (from " + cache_source + ")";
    return out;
}

nlohmann::json CpuInfo::to_json() const {
    auto caches_json = nlohmann::json::array();
    for (const auto& c : caches)
        caches_json.push_back({{"level", c.level},
                               {"type", c.type},
                               {"size_bytes", c.size_bytes},
                               {"line_bytes", c.line_bytes},
                               {"ways", c.ways}});
    return {{"architecture", architecture},
            {"vendor", vendor},
            {"brand", brand},
            {"microarchitecture", microarchitecture},
            {"family", family},
            {"model", model},
            {"stepping", stepping},
            {"logical_cpus", logical_cpus},
            {"physical_cores", physical_cores},
            {"caches", caches_json},
            {"cache_source", cache_source},
            {"cache_note", cache_note},
            {"features", features},
            {"isa_levels", isa_levels},
            {"best_level", best_level},
            {"isa_cap", isa_cap.empty() ? nlohmann::json() : nlohmann::json(isa_cap)},
            {"detected_isa_levels", detected_isa_levels}};
}

nlohmann::json HostInfo::to_json() const {
    return {{"hostname", hostname}, {"os", os},
            {"distro", distro},     {"memory_bytes", memory_bytes},
            {"governor", governor}, {"throttle_count", throttle_count}};
}

std::vector<std::pair<std::string, std::string>> device_property_entries(const DeviceInfo& device) {
    std::vector<std::pair<std::string, std::string>> out;
    if (!device.properties.is_object())
        return out;
    const nlohmann::json properties = device.properties; // its members in key order
    for (const auto& [key, value] : properties.items())
        out.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
    return out;
}

const CpuInfo& cpu_info() {
    static const CpuInfo info = detect_cpu();
    return info;
}

std::int64_t physical_memory_bytes() noexcept {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? std::int64_t(pages) * page : 0;
}

std::string shared_memory_huge_pages() {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
    std::string text;
    std::getline(in, text);
    const auto open = text.find('['), close = text.find(']');
    return open != std::string::npos && close != std::string::npos && close > open
               ? text.substr(open + 1, close - open - 1)
               : std::string();
}

HostInfo host_info() {
    HostInfo h;
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) == 0)
        h.hostname = name;
    struct utsname u {};
    if (uname(&u) == 0)
        h.os = std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine;
    {
        std::ifstream in("/etc/os-release");
        for (std::string line; std::getline(in, line);)
            if (line.rfind("PRETTY_NAME=", 0) == 0) {
                h.distro = line.substr(12);
                if (h.distro.size() >= 2 && h.distro.front() == '"')
                    h.distro = h.distro.substr(1, h.distro.size() - 2);
            }
    }
    h.memory_bytes = physical_memory_bytes();
    h.governor = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    std::error_code ec;
    std::int64_t throttle = 0;
    bool any = false;
    for (unsigned cpu = 0; cpu < 4096; ++cpu) {
        const fs::path dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
        if (!fs::exists(dir, ec))
            break;
        for (const char* f :
             {"thermal_throttle/core_throttle_count", "thermal_throttle/package_throttle_count"}) {
            const auto v = read_first_line(dir / f);
            if (!v.empty()) {
                any = true;
                throttle += std::atoll(v.c_str());
            }
        }
    }
    h.throttle_count = any ? throttle : -1;
    return h;
}

} // namespace switchyard
