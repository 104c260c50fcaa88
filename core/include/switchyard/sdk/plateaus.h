// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>
#include <switchyard/sdk/device.h>
#include <switchyard/sdk/value.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace switchyard {

/// One point of a working-set sweep: bytes in play and the bandwidth measured there.
struct SWITCHYARD_CORE_EXPORT SweepPoint {
    double working_set_bytes = 0;
    double gbs = 0;
};

/// A cache level a sweep's plateaus are matched to: its name ("L1", "L2", "L3", "LLC")
/// and the bytes it holds for the threads the sweep ran on.
struct SWITCHYARD_CORE_EXPORT SweepCache {
    std::string level;
    double capacity_bytes = 0;
};

/// A run of sweep points at about one bandwidth, the way LBNL's Empirical Roofline Toolkit
/// reads its sweeps: `level` is the cache it matches (or `memory_level` for the last one,
/// past every cache), `gbs` its best point, [first, last] the working sets it spans.
struct SWITCHYARD_CORE_EXPORT Plateau {
    std::string level;
    double gbs = 0;
    double first_bytes = 0, last_bytes = 0;
    double capacity_bytes = 0; // of the matched cache; 0 for memory
    std::size_t points = 0;
};

/// Plateaus of `points` (sorted by working set, ascending): a plateau continues while a
/// point stays within `drop` (0.9: 10 %) of the plateau's best; a lower point starts the
/// next one. A one-point run before another (a transition, where part of the set still
/// hits the level above, or noise) is folded into the next. Each run but the last is
/// labelled with the smallest level of `caches` (ascending) that holds its last working
/// set within `reach` (2: a set of 2x a CPU cache's size still hits it partly; a GPU, whose
/// summed L1s and L2 differ by less than 2x, needs less); consecutive runs with
/// one label are one plateau (noise split it), and runs past every cache join memory.
/// The last run, which reaches the sweep's end, is `memory_level`. Labels therefore come
/// out in the order of `caches`, each at most once, memory last.
inline std::vector<Plateau> detect_plateaus(const std::vector<SweepPoint>& points,
                                            const std::vector<SweepCache>& caches,
                                            const std::string& memory_level, double drop = 0.9,
                                            double reach = 2.0) {
    std::vector<Plateau> runs;
    for (const auto& p : points) {
        if (!(p.gbs > 0))
            continue;
        if (runs.empty() || p.gbs < drop * runs.back().gbs) {
            runs.push_back({"", p.gbs, p.working_set_bytes, p.working_set_bytes, 0, 1});
            continue;
        }
        auto& r = runs.back();
        r.gbs = std::max(r.gbs, p.gbs);
        r.last_bytes = p.working_set_bytes;
        ++r.points;
    }
    for (std::size_t i = 0; i + 1 < runs.size();) {
        if (runs[i].points == 1) {
            runs[i + 1].first_bytes = runs[i].first_bytes;
            runs.erase(runs.begin() + std::ptrdiff_t(i));
        } else {
            ++i;
        }
    }
    std::vector<Plateau> out;
    if (runs.empty())
        return out;
    auto memory = runs.back();
    memory.level = memory_level;
    memory.capacity_bytes = 0;
    for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
        auto r = runs[i];
        const SweepCache* match = nullptr;
        for (const auto& c : caches)
            if (r.last_bytes <= reach * c.capacity_bytes) {
                match = &c;
                break;
            }
        if (!match) { // past every cache: memory starts here
            memory.first_bytes = std::min(memory.first_bytes, r.first_bytes);
            memory.gbs = std::max(memory.gbs, r.gbs);
            memory.points += r.points;
            continue;
        }
        if (!out.empty() && out.back().level == match->level) {
            out.back().gbs = std::max(out.back().gbs, r.gbs);
            out.back().last_bytes = r.last_bytes;
            out.back().points += r.points;
            continue;
        }
        r.level = match->level;
        r.capacity_bytes = match->capacity_bytes;
        out.push_back(r);
    }
    out.push_back(memory);
    return out;
}

/// A device's sweep as its `properties.sweep`: the points, the plateaus and (when given) the
/// caches they were matched to, the way every device (CPU cross-check, OpenCL, CUDA) records it.
inline Value sweep_json(const std::vector<SweepPoint>& points, const std::vector<Plateau>& plateaus,
                        const std::vector<SweepCache>& caches) {
    Value jp = Value::array(), jl = Value::array();
    for (const auto& p : points)
        jp.push_back({{"working_set_bytes", p.working_set_bytes}, {"gbs", p.gbs}});
    for (const auto& p : plateaus)
        jl.push_back({{"level", p.level},
                      {"gbs", p.gbs},
                      {"first_bytes", p.first_bytes},
                      {"last_bytes", p.last_bytes},
                      {"capacity_bytes", p.capacity_bytes}});
    Value j = {{"points", std::move(jp)}, {"plateaus", std::move(jl)}};
    if (!caches.empty()) {
        auto& jc = j["caches"] = Value::array();
        for (const auto& c : caches)
            jc.push_back({{"level", c.level}, {"capacity_bytes", c.capacity_bytes}});
    }
    return j;
}

/// The empirical per-level ceilings of a sweep: "<level>.copy" (lower-case level) for each
/// plateau of a cache, with that cache's capacity and the plateau's best point. The memory
/// plateau gives none: the device's directed copy probe is its memory ceiling. `kernel`
/// says what the sweep ran ("x = a x + b in place, read+write").
inline std::vector<Ceiling> plateau_ceilings(const std::vector<Plateau>& plateaus,
                                             const std::string& kernel) {
    std::vector<Ceiling> out;
    for (const auto& p : plateaus) {
        if (p.capacity_bytes <= 0)
            continue;
        Ceiling c;
        for (const char ch : p.level)
            c.id += char(std::tolower(static_cast<unsigned char>(ch)));
        c.id += ".copy";
        c.kind = "bandwidth";
        c.level = p.level;
        c.value = p.gbs;
        c.working_set_bytes = p.last_bytes;
        c.capacity_bytes = p.capacity_bytes;
        char range[96];
        std::snprintf(range, sizeof range, "plateau %.0f KiB - %.0f KiB", p.first_bytes / 1024.0,
                      p.last_bytes / 1024.0);
        c.method = "working-set sweep (" + kernel + "), " + range;
        out.push_back(std::move(c));
    }
    return out;
}

} // namespace switchyard
