// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/capabilities.h>

#include <nlohmann/json_fwd.hpp>

#include <vector>

namespace switchyard {

/// Checks one optional dependency on this machine without loading anything:
/// Library: resolved like the dynamic loader would (LD_LIBRARY_PATH, ld.so.cache, default dirs);
/// File: the path exists; Executable: found on PATH; Env: the variable is set and non-empty.
SWITCHYARD_CORE_EXPORT DependencyStatus check_dependency(const Dependency& dependency);

/// check_dependency() with a process-wide cache (the seed registry's _missing_dep_cache);
/// clear_dependency_cache() forgets it (rescan, reset, tests).
SWITCHYARD_CORE_EXPORT DependencyStatus check_dependency_cached(const Dependency& dependency);
SWITCHYARD_CORE_EXPORT std::vector<DependencyStatus>
check_dependencies(const std::vector<Dependency>& dependencies);
SWITCHYARD_CORE_EXPORT void clear_dependency_cache();

/// {"name", "kind", "hint", "found", "location", "detail"}: the one JSON shape of a checked
/// dependency (`show --json`, `doctor --json`).
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const DependencyStatus& status);

} // namespace switchyard
