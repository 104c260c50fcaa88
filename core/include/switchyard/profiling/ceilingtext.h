// SPDX-License-Identifier: MIT
#pragma once

// How a row's fraction of its ceiling reads, on every surface: the CLI's %ceiling column,
// the GUI's "of ceiling" column and the plots' tooltips. Inline: the one formatter is a
// few lines, and the CLI and the GUI print the same text from it.

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

} // namespace switchyard
