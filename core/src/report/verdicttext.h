// SPDX-License-Identifier: MIT
#pragma once
// The number formats compare's texts share (verdictrule.cpp, compare.cpp): one place, since
// a unity build gives a module's files one scope.

#include <cmath>
#include <cstdio>
#include <string>

namespace switchyard::verdicttext {

// A number with at most one decimal ("12.5", "-33", "1203").
inline std::string format_number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.0f" : "%.1f", v);
    return buf;
}

// printf-style formatting into a string of any length.
template <class... Args> std::string format(const char* fmt, Args... args) {
    const int n = std::snprintf(nullptr, 0, fmt, args...);
    std::string out(std::size_t(n > 0 ? n : 0), '\0');
    std::snprintf(out.data(), out.size() + 1, fmt, args...);
    return out;
}

inline std::string pad(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

inline std::string percent(double fraction) {
    return format_number(fraction * 100) + " %";
}

} // namespace switchyard::verdicttext
