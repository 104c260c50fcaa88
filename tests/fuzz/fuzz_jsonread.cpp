// SPDX-License-Identifier: MIT
// libFuzzer: jsonread::parse (the fast path, then the strict parser) against the strict
// parser alone on any bytes. Both give the same verdict and the same value, or the same
// error; every error message is valid UTF-8 (whatever bytes the input held), and the DOM
// written back by jsonread::dump is valid UTF-8 JSON that parses to the same value.
#include "util/jsonread.h"
#include "util/textutil.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using switchyard::jsonread::ParseError;

// The value with its types ("7" read as unsigned or signed dumps alike), or the error.
std::string verdict(std::string_view text, bool fast) {
    try {
        const auto j = fast ? switchyard::jsonread::parse(text)
                            : switchyard::jsonread::detail::parse_strict(text);
        std::string out = switchyard::jsonread::dump(j);
        if (!switchyard::text::valid_utf8(out) || switchyard::jsonread::parse(out) != j)
            __builtin_trap();
        return out;
    } catch (const ParseError& e) {
        if (!switchyard::text::valid_utf8(e.what()))
            __builtin_trap();
        return std::string("error: ") + e.what();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (verdict(text, true) != verdict(text, false))
        __builtin_trap();
    return 0;
}
