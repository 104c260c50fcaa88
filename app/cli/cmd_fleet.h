// SPDX-License-Identifier: MIT
#pragma once

#include "command.h"

namespace switchyard::cli {

/// fleet submit, fleet status, fleet collect: profiling on many Slurm nodes.
void add_fleet_commands(CLI::App& app, Context& context);

} // namespace switchyard::cli
