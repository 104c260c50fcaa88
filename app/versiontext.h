// SPDX-License-Identifier: MIT
// The one version line of both executables: "switchyard-cli 0.1.0 (git 1a2b3c4d5e6f,
// RelWithDebInfo)", from the core they run with.
#pragma once

#include <switchyard/sdk/version.h>

#include <string>
#include <string_view>

namespace switchyard::app {

inline std::string version_text(std::string_view program) {
    std::string text(program);
    text.append(" ").append(core_version());
    text.append(" (git ").append(core_git_hash());
    text.append(", ").append(core_build_type()).append(")");
    return text;
}

} // namespace switchyard::app
