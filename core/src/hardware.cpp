// SPDX-License-Identifier: MIT
#include <switchyard/hardware.h>

#include "kernels/cpukernels.h"
#include "kernels/cpuvariants.h"
#include "kernels/threadpool.h"
#include "textutil.h"

#include <cpu_features_macros.h>
#if defined(CPU_FEATURES_ARCH_X86)
#include <cpuinfo_x86.h>
#elif defined(CPU_FEATURES_ARCH_AARCH64)
#include <cpuinfo_aarch64.h>
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

unsigned count_physical_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 0;
    std::set<std::pair<std::string, std::string>> cores;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &set))
            continue;
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
    c.logical_cpus = ThreadPool::available_cpus();
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
        if (l.cache_type != CPU_FEATURE_CACHE_DATA && l.cache_type != CPU_FEATURE_CACHE_INSTRUCTION &&
            l.cache_type != CPU_FEATURE_CACHE_UNIFIED)
            continue;
        c.caches.push_back({l.level,
                            l.cache_type == CPU_FEATURE_CACHE_DATA          ? "data"
                            : l.cache_type == CPU_FEATURE_CACHE_INSTRUCTION ? "instruction"
                                                                            : "unified",
                            l.cache_size, l.line_size, l.ways});
    }
    const auto& f = info.features;
    const bool v2 = f.cx16 && f.popcnt && f.sse3 && f.ssse3 && f.sse4_1 && f.sse4_2;
    const bool v3 = v2 && cpu_supports_x86_64_v3();
    const bool v4 = v3 && f.avx512f && f.avx512bw && f.avx512cd && f.avx512dq && f.avx512vl;
    if (v2)
        c.isa_levels.push_back("x86-64-v2");
    if (v3)
        c.isa_levels.push_back("x86-64-v3");
    if (v4)
        c.isa_levels.push_back("x86-64-v4");
#elif defined(CPU_FEATURES_ARCH_AARCH64)
    using namespace cpu_features;
    c.architecture = "aarch64";
    const Aarch64Info info = GetAarch64Info();
    c.vendor = std::to_string(info.implementer);
    for (int f = 0; f < AARCH64_LAST_; ++f)
        if (GetAarch64FeaturesEnumValue(&info.features, Aarch64FeaturesEnum(f)))
            c.features.emplace_back(GetAarch64FeaturesEnumName(Aarch64FeaturesEnum(f)));
    c.isa_levels.push_back("neon");
    if (info.features.sve)
        c.isa_levels.push_back("sve");
#endif
    if (c.caches.empty())
        c.caches = sysfs_caches();
    if (c.brand.empty()) {
        std::ifstream in("/proc/cpuinfo");
        for (std::string line; std::getline(in, line);)
            if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
                c.brand = line.substr(line.find(':') + 2);
                break;
            }
    }
    c.best_level = c.isa_levels.empty() ? "generic" : c.isa_levels.back();
    return c;
}

std::mutex g_peaks_mutex;
std::optional<CpuPeaks> g_peaks;

struct AlignedFree {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
using AlignedBuffer = std::unique_ptr<float, AlignedFree>;
AlignedBuffer aligned_floats(std::size_t n) {
    return AlignedBuffer(static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t(64))));
}

double measure_fma_gflops() {
    if (!cpu_supports_x86_64_v3())
        return 0.0;
    auto& pool = ThreadPool::instance();
    const std::int64_t threads = pool.size();
    constexpr std::int64_t iterations = 2'000'000;
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<double> flops(std::size_t(threads), 0.0);
        pool.parallel_for(threads, [&](std::int64_t t) { flops[std::size_t(t)] = cpu::avx2::fma_probe(iterations); });
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double total = 0;
        for (double f : flops)
            total += f;
        best = std::max(best, total / s / 1e9);
    }
    return best;
}

} // namespace

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

nlohmann::json CpuInfo::to_json() const {
    auto caches_json = nlohmann::json::array();
    for (const auto& c : caches)
        caches_json.push_back({{"level", c.level}, {"type", c.type}, {"size_bytes", c.size_bytes},
                               {"line_bytes", c.line_bytes}, {"ways", c.ways}});
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
            {"features", features},
            {"isa_levels", isa_levels},
            {"best_level", best_level}};
}

nlohmann::json HostInfo::to_json() const {
    return {{"hostname", hostname},
            {"os", os},
            {"distro", distro},
            {"memory_bytes", memory_bytes},
            {"governor", governor},
            {"throttle_count", throttle_count}};
}

const CpuInfo& cpu_info() {
    static const CpuInfo info = detect_cpu();
    return info;
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
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0)
        h.memory_bytes = std::int64_t(pages) * page;
    h.governor = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    std::error_code ec;
    std::int64_t throttle = 0;
    bool any = false;
    for (unsigned cpu = 0; cpu < 4096; ++cpu) {
        const fs::path dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
        if (!fs::exists(dir, ec))
            break;
        for (const char* f : {"thermal_throttle/core_throttle_count", "thermal_throttle/package_throttle_count"}) {
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

nlohmann::json CpuPeaks::to_json() const {
    return {{"triad_gbs", triad_gbs}, {"triad_bytes", triad_bytes}, {"fma_gflops", fma_gflops}};
}

double measure_triad_gbs(std::int64_t bytes, int repeats) {
    const std::int64_t n = std::max<std::int64_t>(1024, bytes / 12);
    auto a = aligned_floats(std::size_t(n)), b = aligned_floats(std::size_t(n)), c = aligned_floats(std::size_t(n));
    auto& pool = ThreadPool::instance();
    const std::int64_t parts = pool.size();
    auto chunk = [&](std::int64_t t, auto&& fn) {
        const std::int64_t i0 = n * t / parts, i1 = n * (t + 1) / parts;
        fn(i0, i1);
    };
    // First touch by the thread that will use the pages.
    pool.parallel_for(parts, [&](std::int64_t t) {
        chunk(t, [&](std::int64_t i0, std::int64_t i1) {
            for (std::int64_t i = i0; i < i1; ++i) {
                a.get()[i] = 0.0f;
                b.get()[i] = 1.0f;
                c.get()[i] = 2.0f;
            }
        });
    });
    double best = 0;
    // STREAM's triad a = b + s*c in every form this CPU can run (plain stores, SSE2
    // non-temporal stores, AVX2+FMA non-temporal stores), interleaved; the best is the
    // machine's limit, so no kernel can beat the probe by storing differently.
    const int forms = cpu_supports_x86_64_v3() ? 3 : 2;
    for (int r = 0; r < forms * std::max(1, repeats); ++r) {
        const int form = r % forms;
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallel_for(parts, [&](std::int64_t t) {
            chunk(t, [&](std::int64_t i0, std::int64_t i1) {
                float* out = a.get() + i0;
                const float* x = b.get() + i0;
                const float* v = c.get() + i0;
                if (form == 0)
                    cpu::generic::triad(i1 - i0, out, x, v, 3.0f);
                else if (form == 1)
                    cpu::generic::triad_stream(i1 - i0, out, x, v, 3.0f);
                else
                    cpu::avx2::flow_match(i1 - i0, x, v, 3.0f, out, /*stream=*/true);
            });
        });
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s > 0)
            best = std::max(best, 12.0 * double(n) / s / 1e9);
    }
    return best;
}

const CpuPeaks& cpu_peaks() {
    std::lock_guard lock(g_peaks_mutex);
    if (!g_peaks) {
        CpuPeaks p;
        p.triad_bytes = std::max<std::int64_t>(std::int64_t(64) << 20, 4 * cpu_info().last_level_cache_bytes());
        p.triad_gbs = measure_triad_gbs(p.triad_bytes);
        p.fma_gflops = measure_fma_gflops();
        g_peaks = p;
    }
    return *g_peaks;
}

void set_cpu_peaks(const CpuPeaks& peaks) {
    std::lock_guard lock(g_peaks_mutex);
    g_peaks = peaks;
}

} // namespace switchyard
