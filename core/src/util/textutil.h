// SPDX-License-Identifier: MIT
// Small string and path helpers shared by core/src (private: not installed).
#pragma once

#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::text {

/// `to_text(item)` of every item, `separator` between them.
template <class Range, class ToText>
std::string join(const Range& items, std::string_view separator, ToText&& to_text) {
    std::string out;
    bool first = true;
    for (const auto& item : items) {
        if (!first)
            out += separator;
        out += to_text(item);
        first = false;
    }
    return out;
}

/// The items (strings, string_views), `separator` between them: "a, b, c".
template <class Range> std::string join(const Range& items, std::string_view separator = ", ") {
    return join(
        items, separator, [](const auto& item) -> const auto& { return item; });
}

/// The items of a list separated by any of `separators` ("a:b", ":;" for "a:b;c"), in
/// order. Empty items ("a::b", a leading or trailing separator) are dropped unless
/// `keep_empty`; with it, "" is one empty item, as in a search path that means ".".
inline std::vector<std::string> split(std::string_view text, std::string_view separators,
                                      bool keep_empty = false) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const auto end = text.find_first_of(separators, start);
        const auto item = text.substr(start, end == std::string_view::npos ? std::string_view::npos
                                                                           : end - start);
        if (keep_empty || !item.empty())
            out.emplace_back(item);
        if (end == std::string_view::npos)
            return out;
        start = end + 1;
    }
}

/// "'text'", as suggestions are shown ("did you mean: 'cpu', 'cuda'?").
inline std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

/// Everything before the last '/': "." when there is none, "/" for "/file".
inline std::string dirname_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

/// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF) that starts at `s`, of the `left` bytes there; 0 when
/// none starts there. ASCII is 1.
inline std::size_t utf8_length(const unsigned char* s, std::size_t left) noexcept {
    if (left == 0)
        return 0;
    auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
        return i < left && s[i] >= lo && s[i] <= hi;
    };
    const unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return cont(1) ? 2 : 0;
    if (c == 0xE0)
        return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
        return cont(1) && cont(2) ? 3 : 0;
    if (c == 0xED)
        return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    if (c == 0xF0)
        return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (c >= 0xF1 && c <= 0xF3)
        return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (c == 0xF4)
        return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
}

/// Whether `text` is well-formed UTF-8 throughout.
inline bool valid_utf8(std::string_view text) noexcept {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    for (std::size_t i = 0; i < text.size();) {
        if (s[i] < 0x80) {
            ++i;
            continue;
        }
        const auto n = utf8_length(s + i, text.size() - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

/// `text` with every byte that is not part of well-formed UTF-8 written as the visible
/// escape "\xNN" (nothing else changed): text that any UTF-8 consumer (a JSON writer, a
/// terminal, Qt) takes as it is, with the bad bytes still there to see.
inline std::string utf8_escaped(std::string_view text) {
    static const char* const hex = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    for (std::size_t i = 0; i < text.size();) {
        const auto n = utf8_length(s + i, text.size() - i);
        if (n == 0) {
            out += "\\x";
            out += hex[s[i] >> 4];
            out += hex[s[i] & 15];
            ++i;
            continue;
        }
        out.append(text.data() + i, n);
        i += n;
    }
    return out;
}

/// Untrusted text (from a manifest, a library, a report, a file name, another program)
/// made safe to put into a message, a terminal line or a table cell: every C0 control
/// (newline and tab too: untrusted text never starts a line), DEL, the C1 controls
/// (U+0080..U+009F, which steer terminals too) and the bidirectional controls (U+061C,
/// U+200E, U+200F, U+202A..U+202E, U+2066..U+2069, which reorder what is shown) are written
/// as visible escapes ("\x1b", "\x0a", "\u0085", "\u202e"), and so is every byte that is
/// not part of well-formed UTF-8 ("\xff", "\xc0"), so the result is valid UTF-8 whatever
/// the input held (a JSON writer takes it). The one escaper: apply it where
/// untrusted text enters a message, never to the tool's own text.
inline std::string untrusted(std::string_view text) {
    static const char* const hex = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    auto u = [&](unsigned cp) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4)
            out += hex[(cp >> shift) & 15];
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        const auto next = [&](std::size_t k) {
            return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
        };
        if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else if (c == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) {
            u(next(1));
            ++i;
        } else if (c == 0xd8 && next(1) == 0x9c) { // U+061C ARABIC LETTER MARK
            u(0x061c);
            ++i;
        } else if (c == 0xe2 && next(1) == 0x80 &&
                   (next(2) == 0x8e || next(2) == 0x8f || (next(2) >= 0xaa && next(2) <= 0xae))) {
            u(0x2000 + (next(2) - 0x80));
            i += 2;
        } else if (c == 0xe2 && next(1) == 0x81 && next(2) >= 0xa6 && next(2) <= 0xa9) {
            u(0x2040 + (next(2) - 0x80));
            i += 2;
        } else if (c < 0x80) {
            out += char(c);
        } else if (const auto n = utf8_length(reinterpret_cast<const unsigned char*>(&text[i]),
                                              text.size() - i);
                   n == 0) {
            out += "\\x"; // not UTF-8: the byte, visibly
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out.append(&text[i], n);
            i += n - 1;
        }
    }
    return out;
}

/// Everything after the last '/'.
inline std::string basename_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The first line of a text file; "" when it cannot be read.
inline std::string read_first_line(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

/// `t` as ISO 8601 in UTC: "2024-05-01T12:34:56Z".
inline std::string utc_iso8601(std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/// Now, as ISO 8601 in UTC.
inline std::string utc_now_iso8601() {
    return utc_iso8601(std::time(nullptr));
}

} // namespace switchyard::text
