// SPDX-License-Identifier: MIT
#include <switchyard/buildinfo.h>
#include <switchyard/sdk/version.h>

#include <charconv>

namespace switchyard {

std::string_view core_version() noexcept {
    return SWITCHYARD_VERSION_STRING;
}
std::string_view core_git_hash() noexcept {
    return SWITCHYARD_GIT_HASH;
}
std::string_view core_build_type() noexcept {
    return SWITCHYARD_BUILD_TYPE;
}

std::optional<VersionTriple> parse_version(std::string_view text) noexcept {
    VersionTriple out{};
    const char* p = text.data();
    const char* end = text.data() + text.size();
    for (std::size_t i = 0; i < 3; ++i) {
        if (p == end || *p < '0' || *p > '9')
            return std::nullopt;
        auto [next, ec] = std::from_chars(p, end, out[i]);
        if (ec != std::errc())
            return std::nullopt;
        p = next;
        if (i < 2) {
            if (p == end || *p != '.')
                return std::nullopt;
            ++p;
        }
    }
    return out;
}

} // namespace switchyard
