// SPDX-License-Identifier: MIT
// Ceiling choice: which ceiling bounds a row (choose_ceiling, preferred_ceiling,
// shares_host_caches in profiler.h), and the row judged against it.
#include <switchyard/profiling/profiler.h>

#include "profiling/profilerdetail.h"
#include "util/textutil.h"

#include <switchyard/hardware/devicekind.h>
#include <switchyard/hardware/isa.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace switchyard {

// The level's best: a kernel that mostly reads moves more bytes per second than a triad, so
// the read ceiling bounds it, not the triad.
bool preferred_ceiling(const Ceiling& c, const Ceiling& than) {
    if (c.measured != than.measured)
        return c.measured;
    return c.value > than.value;
}

bool shares_host_caches(const DeviceInfo& info) {
    if (device_kind(info.kind) == DeviceKind::Cpu)
        return false;
    return info.properties.text_or("device_type", std::string()) == "CPU";
}

namespace {

// Whether the id's dot-separated parts include `kind` ("fma.fp32.all": fp32).
bool ceiling_of_kind(const std::string& id, std::string_view kind) {
    const auto parts = text::split(id, ".");
    return std::find(parts.begin(), parts.end(), kind) != parts.end();
}

// The reads' share of the access pattern a bandwidth ceiling's id names ("dram.copy.1t":
// 1/2), 0 when it names none (theoretical figures).
double pattern_read_share(const std::string& id) {
    for (const auto& part : text::split(id, ".")) {
        if (part == "read")
            return 1.0;
        if (part == "triad")
            return 2.0 / 3.0;
        if (part == "copy")
            return 0.5;
    }
    return 0.0;
}

} // namespace

CeilingChoice choose_ceiling(const DeviceInfo& info, double working_set_bytes, double flops,
                             bool all_threads, double traffic_bytes, std::string_view compute,
                             double read_share) {
    CeilingChoice out;
    const double bytes = traffic_bytes > 0 ? traffic_bytes : working_set_bytes;
    if (bytes > 0)
        out.intensity = flops / bytes;
    const int want = all_threads ? 0 : 1;
    // Whether the row's read share reaches the pattern of ceiling `c` (true where either is
    // unknown).
    auto reaches = [&](const Ceiling& c) {
        const double share = pattern_read_share(c.id);
        return !(read_share > 0) || !(share > 0) || share <= read_share + 1e-9;
    };
    // The preferred bandwidth ceiling of each level, in order of capacity (memory last):
    // measured before theoretical, then of a pattern the row reaches, then the higher.
    std::vector<const Ceiling*> levels;
    for (const auto& c : info.ceilings) {
        if (c.kind != "bandwidth" || c.threads != want || !(c.value > 0))
            continue;
        auto it = std::find_if(levels.begin(), levels.end(),
                               [&](const Ceiling* l) { return l->level == c.level; });
        if (it == levels.end())
            levels.push_back(&c);
        else if (c.measured != (*it)->measured ? c.measured
                 : reaches(c) != reaches(**it) ? reaches(c)
                                               : preferred_ceiling(c, **it))
            *it = &c;
    }
    std::stable_sort(levels.begin(), levels.end(), [](const Ceiling* a, const Ceiling* b) {
        const double ca = a->capacity_bytes > 0 ? a->capacity_bytes : 1e300;
        const double cb = b->capacity_bytes > 0 ? b->capacity_bytes : 1e300;
        return ca < cb;
    });
    // A row at least as large as the memory probe's own working set runs from memory, as
    // the probe did, whatever cache size the machine reports (a VM's report of the host's
    // 480 MiB L3, where the DRAM probe found memory from 256 MiB on).
    double memory_ws = 0;
    for (const auto* l : levels)
        if (l->capacity_bytes <= 0 && l->working_set_bytes > 0)
            memory_ws = l->working_set_bytes;
    const Ceiling* bw = nullptr;
    for (const auto* l : levels)
        if (l->capacity_bytes <= 0 || (working_set_bytes <= kLevelSlack * l->capacity_bytes &&
                                       !(memory_ws > 0 && working_set_bytes >= memory_ws))) {
            bw = l;
            break;
        }
    if (!bw && !levels.empty())
        bw = levels.back(); // larger than every level known: the largest one
    // A device that states a cache but has no ceiling for it (OpenCL devices report
    // global_memory_cache_bytes and probe only their memory): a row that fits in that cache
    // runs from it, faster than the memory probe (PoCL on this CPU: 2-6x device.copy), and
    // nothing here bounds it. Such a row is not judged; its level says why.
    bool unmeasured_cache = false;
    if (bw && bw->capacity_bytes <= 0) {
        const double cache = info.properties.number_or("global_memory_cache_bytes", 0.0);
        if (cache > 0 && working_set_bytes <= kLevelSlack * cache) {
            unmeasured_cache = true;
            bw = nullptr;
        }
    }
    const Ceiling* fma = nullptr;
    for (const auto& c : info.ceilings)
        if (c.kind == "compute" && c.threads == want && c.value > 0 &&
            ceiling_of_kind(c.id, compute) && (!fma || (c.measured && !fma->measured)))
            fma = &c;
    if (!fma && compute != "fp32" && flops > 0) {
        // Arithmetic this device has no ceiling for (TF32 on a GPU the table does not hold):
        // compute-bound, and not judged.
        out.ceiling = nullptr;
        out.level = "compute";
        return out;
    }
    // Compute-bound: the intensity is past the ridge point of memory (the last level), as
    // in the classic roofline. The in-cache ridge points are far lower, and the nominal flop
    // counts of the elementwise ops would make small in-cache rows look compute-bound.
    const Ceiling* memory = levels.empty() ? nullptr : levels.back();
    if (fma && flops > 0 && (!memory || out.intensity > fma->value / memory->value)) {
        out.ceiling = fma;
        out.level = "compute";
    } else if (bw) {
        out.ceiling = bw;
        out.level = bw->level;
    } else if (unmeasured_cache) {
        out.level = "cache";
    }
    return out;
}

std::int64_t detail::stated_threads(const KernelCell& cell) {
    const auto n = cell.meta.integer_or("threads", 0);
    return n > 0 && n <= RowSpec::kMaxThreads ? n : 0;
}

bool detail::row_uses_all_threads(const RowSpec& spec, const KernelCell& cell) {
    if (device_kind(spec.device_kind) != DeviceKind::Cpu)
        return true;
    if (const auto n = stated_threads(cell); n > 0)
        return n > 1;
    return spec.variant.find("threaded") != std::string::npos || spec.variant == "openblas";
}

namespace {

// The arithmetic a cell states in its metadata ("compute": "tf32"), "fp32" when none.
std::string stated_compute(const KernelCell& cell) {
    const std::string compute = cell.meta.text_or("compute", std::string());
    return compute.empty() ? std::string("fp32") : compute;
}

// The ISA level a cell's code needs (meta "isa_level") where the SWITCHYARD_MAX_ISA cap in
// force is below it, else "".
std::string level_above_isa_cap(const KernelCell& cell) {
    if (cpu_isa_cap().level.empty())
        return {};
    const std::string level = cell.meta.text_or("isa_level", std::string());
    return !level.empty() && !cpu_supports(level) ? level : std::string();
}

} // namespace

void detail::judge(ProfileRow& row, const DeviceInfo& info, double working_set_bytes,
                   bool all_threads, double read_share, const KernelCell& cell) {
    const auto choice = choose_ceiling(info, working_set_bytes, row.flops, all_threads, row.bytes,
                                       stated_compute(cell), read_share);
    row.intensity = choice.intensity;
    row.level = choice.level;
    if (const auto above = level_above_isa_cap(cell); !above.empty()) {
        // Under SWITCHYARD_MAX_ISA=x86-64-v2 OpenBLAS's Haswell kernels read 129-151 % of the
        // capped (baseline multiply-add) compute ceiling.
        row.warnings.push_back("not judged: this cell runs " + above +
                               " code (OpenBLAS picks its kernels itself), above the "
                               "SWITCHYARD_MAX_ISA cap " +
                               cpu_isa_cap().level +
                               ", whose ceilings do not bound it; set OPENBLAS_CORETYPE to a "
                               "core of the capped level to see that machine's OpenBLAS");
        return;
    }
    if (!choice.ceiling)
        return;
    const Ceiling& c = *choice.ceiling;
    row.ceiling_id = c.id;
    row.level = choice.level;
    row.ceiling_value = c.value;
    const double achieved = c.kind == "compute" ? row.gflops : row.gbps;
    row.ceiling_fraction = c.value > 0 ? achieved / c.value : 0;
    if (row.ceiling_fraction > kCeilingTolerance) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "measured %.0f %% of its ceiling %s (%.1f %s), above the %.0f %% "
                      "tolerance: the ceiling (",
                      row.ceiling_fraction * 100, c.id.c_str(), c.value,
                      c.kind == "compute" ? "GFLOP/s" : "GB/s", kCeilingTolerance * 100);
        row.warnings.push_back(std::string(buf) + c.method +
                               ") or the op's byte/flop count is wrong; this is a bug");
    }
}

} // namespace switchyard
