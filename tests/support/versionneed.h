// SPDX-License-Identifier: MIT
#pragma once

#include <cctype>
#include <string_view>

namespace switchyard::test {

/// The offset of the first "GLIBCXX_3.4.NN" in an ELF file's bytes that is a whole string
/// (NUL on both sides: a version the library needs, not a symbol name's suffix);
/// std::string_view::npos when there is none. Which one a library needs follows what it
/// uses, so tests that rename one find it instead of naming it.
inline std::size_t glibcxx_version_need(std::string_view bytes) {
    constexpr std::string_view prefix = "GLIBCXX_3.4.";
    for (auto at = bytes.find(prefix); at != std::string_view::npos;
         at = bytes.find(prefix, at + 1)) {
        const auto digit = [&](std::size_t i) {
            return std::isdigit(static_cast<unsigned char>(bytes[i])) != 0;
        };
        if (at > 0 && bytes[at - 1] == '\0' && at + 15 <= bytes.size() && digit(at + 12) &&
            digit(at + 13) && bytes[at + 14] == '\0')
            return at;
    }
    return std::string_view::npos;
}

} // namespace switchyard::test
