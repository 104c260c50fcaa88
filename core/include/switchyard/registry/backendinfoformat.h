// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/registry/backendcause.h>
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

/// Untrusted text made safe for a terminal line or a table cell: control characters,
/// newlines and bidirectional overrides become visible escapes ("\x1b", "\x0a", "\u202e").
/// The one escaper (util/textutil.h's `text::untrusted`), for the CLI and the GUI: apply it
/// where untrusted text (a manifest, a library, a report, a file name) enters a message,
/// never to the tool's own text. The renderers below apply it to every such string.
SWITCHYARD_CORE_EXPORT std::string untrusted(std::string_view text);

/// A backend's problem as the doctor, `show` and the GUI present it: its cause's row of the
/// cause table (registry/backendcause.h) with this backend's facts filled in, and the
/// message the registry stored when it failed. Nothing for a healthy backend.
struct SWITCHYARD_CORE_EXPORT CauseText {
    BackendCause cause = BackendCause::None;
    Severity severity = Severity::Info;
    /// One line: "missing libcuda.so.1", "shadowed by the built-in cpu".
    std::string summary;
    /// What to do, one line per missing piece where there are several.
    std::string fix;
    /// The stored message (BackendInfo::error), as it was recorded.
    std::string details;
    bool empty() const noexcept { return summary.empty() && details.empty(); }
};
SWITCHYARD_CORE_EXPORT CauseText explain(const BackendInfo& info);
/// The cause table's fix for one missing shared library (`library_dependency_missing`).
SWITCHYARD_CORE_EXPORT std::string missing_library_fix(std::string_view soname);

/// One line: "name (source): state [cause] - error" (the cause and error when there is one).
SWITCHYARD_CORE_EXPORT std::string summary_line(const BackendInfo& info);
/// The full description: header, versions, paths, dependencies, library dependencies,
/// cells, diagnostics and the problem with its cause (`show`, the GUI's details).
SWITCHYARD_CORE_EXPORT std::string render_text(const BackendInfo& info);

} // namespace switchyard
