// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/registry/backendregistry.h>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace switchyard {

/// The one place a BackendInfo becomes text or JSON: `list`, `show`, `doctor` and the
/// GUI's details pane all use these (docs/json.md describes the JSON).

/// `list --json` row: name, source, tags, available, missing_deps, state, cause, error,
/// description, version.
SWITCHYARD_CORE_EXPORT nlohmann::json summary_json(const BackendInfo& info);
/// `show --json`: the summary plus capabilities, dependencies, kernels, components,
/// diagnostics, paths, shadowed_by, extra and (when read) library_dependencies.
SWITCHYARD_CORE_EXPORT nlohmann::json detail_json(const BackendInfo& info);

/// `text` with its control characters made visible ("\x1b", "\x0a", "\u0085"; newlines and
/// tabs kept when `keep_newlines`): the one escaper of text from manifests and reports.
SWITCHYARD_CORE_EXPORT std::string escape_control(std::string_view text,
                                                  bool keep_newlines = false);

/// The text renderers escape every string they take from a manifest or a library
/// (escape_control), so a description cannot forge lines or steer the terminal.

/// One line: "name (source): state [cause] - error" (the cause and error when there is one).
SWITCHYARD_CORE_EXPORT std::string summary_line(const BackendInfo& info);
/// The full description: header, versions, paths, dependencies, library dependencies,
/// cells, diagnostics and the problem with its cause (`show`, the GUI's details).
SWITCHYARD_CORE_EXPORT std::string render_text(const BackendInfo& info);

} // namespace switchyard
