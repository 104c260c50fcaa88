// SPDX-License-Identifier: MIT
#include <switchyard/report/csv.h>

#include "util/textutil.h"

namespace switchyard {

std::string csv_field(std::string_view raw) {
    const std::string s = text::valid_utf8(raw) ? std::string(raw) : text::utf8_escaped(raw);
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i)
        out += (i ? "," : "") + csv_field(fields[i]);
    return out + "\n";
}

} // namespace switchyard
