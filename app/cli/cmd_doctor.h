// SPDX-License-Identifier: MIT
#pragma once

#include "command.h"

namespace switchyard::cli {

/// `doctor [--json|--markdown]`: the whole machine in one report (exit 1 when it finds errors).
void add_doctor_command(CLI::App& app, Context& context);

} // namespace switchyard::cli
