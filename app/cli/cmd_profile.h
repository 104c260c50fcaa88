// SPDX-License-Identifier: MIT
#pragma once

#include "command.h"

namespace switchyard::cli {

/// profile, compare, hardware, and the hidden __profile-worker the profile controller spawns.
void add_profile_commands(CLI::App& app, Context& context);

} // namespace switchyard::cli
