// SPDX-License-Identifier: MIT
#include <switchyard/registry/suggest.h>

#include "util/difflib.h"
#include "util/textutil.h"

namespace switchyard {

std::vector<std::string> close_names(std::string_view name, const std::vector<std::string>& known) {
    return difflib::get_close_matches(name, known, 2, 0.6);
}

std::string unknown_name(std::string_view what, std::string_view name,
                         const std::vector<std::string>& known, bool list_known) {
    std::string msg = "unknown " + std::string(what) + " '" + text::untrusted(name) + "'";
    if (const auto close = close_names(name, known); !close.empty())
        msg += "; did you mean " + text::join(close, " or ", text::quoted) + "?";
    if (list_known)
        msg += " (known: " + text::join(known) + ")";
    return msg;
}

} // namespace switchyard
