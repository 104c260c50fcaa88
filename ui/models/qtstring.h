// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

#include <string_view>

namespace switchyard::ui {

/// A core string (UTF-8) as a QString.
inline QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace switchyard::ui
