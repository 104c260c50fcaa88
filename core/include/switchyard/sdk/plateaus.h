// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace switchyard {

/// One point of a working-set sweep: bytes in play and the bandwidth measured there.
struct SweepPoint {
    double working_set_bytes = 0;
    double gbs = 0;
};

/// A cache level a sweep's plateaus are matched to: its name ("L1", "L2", "L3", "LLC")
/// and the bytes it holds for the threads the sweep ran on.
struct CacheLevel {
    std::string level;
    double capacity_bytes = 0;
};

/// A run of sweep points at about one bandwidth, the way LBNL's Empirical Roofline Toolkit
/// reads its sweeps: `level` is the cache it matches (or `memory_level` for the last one,
/// past every cache), `gbs` its best point, [first, last] the working sets it spans.
struct Plateau {
    std::string level;
    double gbs = 0;
    double first_bytes = 0, last_bytes = 0;
    double capacity_bytes = 0; // of the matched cache; 0 for memory
    std::size_t points = 0;
};

/// Plateaus of `points` (sorted by working set, ascending): a plateau continues while a
/// point stays within `drop` (0.8: 20 %) of the plateau's best; a lower point starts the
/// next one. Single points before a plateau (the transitions, where part of the set still
/// hits the level above) are folded into it; the last plateau, which reaches the sweep's
/// end, is memory. Each plateau before it is labelled
/// with the smallest level of `caches` (ascending) not used yet whose capacity holds the
/// plateau's last working set within 2x (a set of 2x a level's size still hits it
/// partly); one that matches no level is dropped. Labels therefore come out in the order
/// of `caches`, each at most once, memory last.
inline std::vector<Plateau> detect_plateaus(const std::vector<SweepPoint>& points,
                                            const std::vector<CacheLevel>& caches,
                                            const std::string& memory_level,
                                            double drop = 0.8) {
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
    // A one-point run before another is a transition (or noise at the sweep's start): fold
    // it into the next run (whose first set moves down to it; its best does not change).
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
    std::size_t next_cache = 0;
    for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
        auto r = runs[i];
        while (next_cache < caches.size() &&
               2.0 * caches[next_cache].capacity_bytes < r.last_bytes)
            ++next_cache; // a level this plateau is already past: not seen in the sweep
        if (next_cache == caches.size())
            break;
        if (r.last_bytes > 2.0 * caches[next_cache].capacity_bytes)
            continue;
        r.level = caches[next_cache].level;
        r.capacity_bytes = caches[next_cache].capacity_bytes;
        ++next_cache;
        out.push_back(r);
    }
    auto memory = runs.back();
    memory.level = memory_level;
    memory.capacity_bytes = 0;
    out.push_back(memory);
    return out;
}

} // namespace switchyard
