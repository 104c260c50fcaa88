// SPDX-License-Identifier: MIT
#pragma once

// How a row's fraction of its ceiling reads, on every surface: the CLI's %ceiling column,
// the GUI's "of ceiling" column and the plots' tooltips; and what memory gave beside a DRAM
// row (ProfileRow::memory). Inline: the formatters are a few lines, and the CLI and the GUI
// print the same text from them.

#include <switchyard/profiling/profilerow.h>

#include <cstdio>
#include <string>

namespace switchyard {

/// "78%": ProfileRow::ceiling_fraction as a whole percentage (printf "%.0f%%"); empty for a
/// row that is not measured or has no ceiling that bounds it.
inline std::string ceiling_percent(const ProfileRow& row) {
    if (!row.measured() || !(row.ceiling_fraction > 0))
        return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", row.ceiling_fraction * 100);
    return buf;
}

/// Memory is busy beside a row when its ceiling's probe got less than this share of the
/// ceiling there. On a quiet host the probe's median window reads 0.84-0.98 of its best (a
/// 2-vCPU Zen 5 guest: the ceiling's spread); under 0.8 other work was taking the memory.
inline constexpr double kMemoryBusyShare = 0.8;

/// The share of the row's ceiling that memory gave its probe beside the row; 0 when not
/// measured (ProfileRow::memory).
inline double memory_share(const ProfileRow& row) {
    return row.memory.measured() && row.ceiling_value > 0 && row.memory.probe == row.ceiling_id
               ? row.memory.median_gbs / row.ceiling_value
               : 0.0;
}

/// Whether memory was busy beside the row (memory_share under kMemoryBusyShare).
inline bool memory_busy(const ProfileRow& row) {
    const double s = memory_share(row);
    return s > 0 && s < kMemoryBusyShare;
}

/// "memory beside the row: the dram.copy.1t probe moved 41.2 GB/s, 75 % of the ceiling
/// (54.6), busy: other work was taking the memory; the row moved 97 % of that"; empty when
/// not measured.
inline std::string memory_text(const ProfileRow& row) {
    const double s = memory_share(row);
    if (!(s > 0))
        return {};
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "memory beside the row: the %s probe moved %.1f GB/s, %.0f %% of the ceiling "
                  "(%.1f)%s; the row moved %.0f %% of that",
                  row.memory.probe.c_str(), row.memory.median_gbs, s * 100, row.ceiling_value,
                  memory_busy(row) ? ", busy: other work was taking the memory" : "",
                  row.gbps / row.memory.median_gbs * 100);
    return buf;
}

} // namespace switchyard
