// SPDX-License-Identifier: MIT
#pragma once

#include "command.h"

namespace switchyard::cli {

/// profile, hardware, and the hardware listing (the profile worker is `__worker profile`,
/// worker/workermain.h).
void add_profile_commands(CLI::App& app, Context& context);
/// compare (two or more reports) and check (reports against references with tolerances).
void add_compare_commands(CLI::App& app, Context& context);

} // namespace switchyard::cli
