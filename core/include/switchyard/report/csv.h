// SPDX-License-Identifier: MIT
#pragma once

// CSV as RFC 4180 writes it: the one writer of the report's rows (`profile --csv`), the
// kernel matrix (`matrix --csv`) and the GUI's table export.

#include <switchyard/core_export.h>

#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// One field: quoted where it holds a comma, a quote, CR or LF (quotes doubled), and always
/// valid UTF-8 (a malformed byte of a report or plugin is written "\xNN").
SWITCHYARD_CORE_EXPORT std::string csv_field(std::string_view raw);
/// The fields, each csv_field(), joined by commas, ended by "\n".
SWITCHYARD_CORE_EXPORT std::string csv_line(const std::vector<std::string>& fields);

} // namespace switchyard
