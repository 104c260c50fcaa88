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

/// `text` with every byte that is not part of well-formed UTF-8 written as the visible
/// escape "\xNN", nothing else changed: for a UTF-8 consumer (Qt, a JSON or CSV reader)
/// that would otherwise drop or refuse the bytes. `text` itself when it is valid.
SWITCHYARD_CORE_EXPORT std::string utf8_escaped(std::string_view text);

/// `value` as JSON text, valid UTF-8 whatever a manifest, a library, a file name or a report
/// put into its strings (bytes that are not UTF-8 become the visible text "\xNN"). The one
/// writer of the front ends' `--json` outputs.
SWITCHYARD_CORE_EXPORT std::string json_text(const nlohmann::json& value, int indent = -1);

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
    /// The stored message (BackendInfo::error), each line escaped (`untrusted`).
    std::string details;
    /// The first clause of the stored message, escaped and at most kShortReasonChars long
    /// ("not valid JSON at line 1, column 4: syntax error ..."): what `list` shows beside
    /// the summary of an invalid or failed backend, so the reason is not one `show` away.
    /// Empty when the message adds nothing to the summary.
    std::string reason;
    static constexpr std::size_t kShortReasonChars = 100;
    bool empty() const noexcept { return summary.empty() && details.empty(); }
};
SWITCHYARD_CORE_EXPORT CauseText explain(const BackendInfo& info);
/// The cause table's summary of `cause` with `{missing}` filled in by `missing` (escaped
/// here): for problems that are not a backend's (an ICD file, a device's GPU code).
SWITCHYARD_CORE_EXPORT std::string cause_summary(BackendCause cause, std::string_view missing);
/// The cause table's fix for one missing shared library (`library_dependency_missing`).
SWITCHYARD_CORE_EXPORT std::string missing_library_fix(std::string_view soname);

/// One line: "name (source): state [cause] - error" (the cause and error when there is one).
SWITCHYARD_CORE_EXPORT std::string summary_line(const BackendInfo& info);
/// The full description: header, versions, paths, dependencies, library dependencies,
/// cells, diagnostics and the problem with its cause (`show`, the GUI's details).
SWITCHYARD_CORE_EXPORT std::string render_text(const BackendInfo& info);

} // namespace switchyard
