// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// The names of `known` close to `name`, best first, as Python's
/// difflib.get_close_matches(name, known, n=2, cutoff=0.6) chooses them (the core's one
/// difflib port): for the front ends, where a typed name (a subcommand, an option, a report's
/// flag value) is not one they know.
SWITCHYARD_CORE_EXPORT std::vector<std::string> close_names(std::string_view name,
                                                            const std::vector<std::string>& known);

/// The one wording of an unknown typed name: "unknown op 'gemmm'; did you mean 'gemm'? (known:
/// flow_match_step, gemm, ...)", `name` escaped (`untrusted`). The known list is left out when
/// `list_known` is false (long lists).
SWITCHYARD_CORE_EXPORT std::string unknown_name(std::string_view what, std::string_view name,
                                                const std::vector<std::string>& known,
                                                bool list_known = true);

} // namespace switchyard
