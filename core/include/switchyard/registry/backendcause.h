// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/errors.h>

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace switchyard {

/// How much a problem matters: an Error keeps the backend from loading, a Warning makes it
/// unavailable here (or may), Info needs no action.
enum class Severity { Error, Warning, Info };

SWITCHYARD_CORE_EXPORT std::string_view to_string(Severity severity) noexcept;

/// One row of the cause table: the one place that says what each BackendCause means and what
/// to do about it. The doctor, `show`/`list` and the GUI render these rows (through
/// `explain`, registry/backendinfoformat.h); none of them has wording of its own.
///
/// `summary` and `fix` are templates: `{library}`, `{manifest}`, `{missing}` (the missing
/// libraries or dependencies), `{shadowed_by}`, `{contract}`, `{core_contract}`,
/// `{core_version}`, `{min_core}`, `{max_core}` and `{soname}` (one missing library; a fix
/// with it is given once per library) are filled in from the backend.
struct SWITCHYARD_CORE_EXPORT CauseEntry {
    BackendCause cause;
    /// The stable snake_case id: the `"cause"` of every `--json` output.
    std::string_view id;
    Severity severity;
    /// One short clause: "missing {missing}", "shadowed by {shadowed_by}".
    std::string_view summary;
    /// What to run or change; empty where nothing is to be done.
    std::string_view fix;
};

/// Every cause, in declaration order.
SWITCHYARD_CORE_EXPORT std::span<const CauseEntry> cause_table() noexcept;
/// The row of `cause`.
SWITCHYARD_CORE_EXPORT const CauseEntry& cause_entry(BackendCause cause) noexcept;

/// The stable id, e.g. "untrusted", "library_missing".
SWITCHYARD_CORE_EXPORT std::string_view to_string(BackendCause cause) noexcept;
/// The cause whose id is `id`; nullopt for an unknown id.
SWITCHYARD_CORE_EXPORT std::optional<BackendCause>
backend_cause_from_string(std::string_view id) noexcept;
/// Every cause, in declaration order (docs, tests).
SWITCHYARD_CORE_EXPORT std::vector<BackendCause> all_backend_causes();

SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, BackendCause cause);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, BackendCause& cause);

} // namespace switchyard
