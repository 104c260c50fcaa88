// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/registry/backendinfoformat.h>

#include <QString>

#include <string_view>

namespace switchyard::ui {

/// A core string (UTF-8) as a QString. Bytes that are not UTF-8 (a hostile manifest, a
/// file name, a report) are shown as the visible escape "\xNN" (utf8_escaped), where
/// QString::fromUtf8 alone would make them U+FFFD and hide which bytes they were.
inline QString qs(std::string_view s) {
    for (const char c : s)
        if (static_cast<unsigned char>(c) >= 0x80) {
            const std::string safe = utf8_escaped(s);
            return QString::fromUtf8(safe.data(), static_cast<qsizetype>(safe.size()));
        }
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace switchyard::ui
