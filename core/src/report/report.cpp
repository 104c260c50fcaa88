// SPDX-License-Identifier: MIT
#include <switchyard/report/report.h>

#include "util/jsonread.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace switchyard {

nlohmann::json Report::to_json() const {
    auto rows_json = nlohmann::json::array();
    for (const auto& r : rows)
        rows_json.push_back(r.to_json());
    return {{"format", kFormat}, {"format_version", kFormatVersion}, {"context", context}, {"rows", rows_json}};
}

Report Report::from_json(const nlohmann::json& j) {
    try {
        using namespace jsonread;
        if (!j.is_object())
            fail("report", "expected a JSON object");
        const auto format = str(j, "format", "report");
        if (format != kFormat)
            fail("report.format", "expected '" + std::string(kFormat) + "', got '" + format + "'");
        const auto version = integer(j, "format_version", "report", std::nullopt, 0, 1 << 20);
        if (version > kFormatVersion)
            fail("report.format_version", std::to_string(version) + " is newer than this Switchyard reads (" +
                                              std::to_string(kFormatVersion) + ")");
        Report r;
        r.context = object(j, "context", "report");
        const auto* rows = find(j, "rows");
        if (!rows || !rows->is_array())
            fail("report.rows", "expected an array");
        r.rows.reserve(rows->size());
        for (std::size_t i = 0; i < rows->size(); ++i) {
            try {
                r.rows.push_back(ProfileRow::from_json((*rows)[i]));
            } catch (const std::exception& e) {
                // "row.stats.median: ..." -> "rows[3].stats.median: ..."
                std::string msg = e.what();
                if (msg.rfind("row", 0) == 0)
                    msg = "rows[" + std::to_string(i) + "]" + msg.substr(3);
                else
                    msg = "rows[" + std::to_string(i) + "]." + msg;
                throw ReportError(msg);
            }
        }
        return r;
    } catch (const ReportError&) {
        throw;
    } catch (const std::exception& e) {
        throw ReportError(e.what());
    }
}

namespace {

// Maximum nesting of arrays/objects, outside strings. Stops counting past `limit`.
int nesting_depth(std::string_view text, int limit) {
    int depth = 0, max_depth = 0;
    bool in_string = false, escape = false;
    for (char c : text) {
        if (in_string) {
            if (escape)
                escape = false;
            else if (c == '\\')
                escape = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '[' || c == '{') {
            max_depth = std::max(max_depth, ++depth);
            if (max_depth > limit)
                return max_depth;
        } else if (c == ']' || c == '}')
            --depth;
    }
    return max_depth;
}

} // namespace

Report Report::parse(std::string_view text, const std::string& origin) {
    if (text.size() > kMaxBytes)
        throw ReportError(origin + ": " + std::to_string(text.size()) + " bytes is larger than the " +
                          std::to_string(kMaxBytes >> 20) + " MiB a report may have");
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        throw ReportError(origin + ": empty file, not a report");
    if (nesting_depth(text, kMaxDepth) > kMaxDepth)
        throw ReportError(origin + ": nested deeper than " + std::to_string(kMaxDepth) + " levels, not a report");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is where the parser stopped; at the end it means a truncated file.
        const bool truncated = e.byte >= text.size();
        throw ReportError(origin + ": " + (truncated ? "truncated JSON (the file ends early)" : "malformed JSON") +
                          " at byte " + std::to_string(e.byte) + ": " + e.what());
    } catch (const std::exception& e) {
        throw ReportError(origin + ": cannot parse: " + e.what());
    }
    try {
        return from_json(j);
    } catch (const ReportError& e) {
        throw ReportError(origin + ": " + e.what());
    }
}

Report Report::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ReportError(path + ": cannot open the file");
    in.seekg(0, std::ios::end);
    const auto size = in.tellg();
    if (size < 0)
        throw ReportError(path + ": cannot read the file");
    if (std::size_t(size) > kMaxBytes)
        throw ReportError(path + ": " + std::to_string(std::size_t(size)) + " bytes is larger than the " +
                          std::to_string(kMaxBytes >> 20) + " MiB a report may have");
    in.seekg(0);
    std::string text(std::size_t(size), '\0');
    in.read(text.data(), size);
    if (!in)
        throw ReportError(path + ": cannot read the file");
    return parse(text, path);
}

void Report::save(const std::string& path) const {
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw ReportError(path + ": cannot write the file");
        out << to_json().dump(1) << '\n';
        out.close();
        if (!out) {
            std::remove(tmp.c_str());
            throw ReportError(path + ": write failed");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw ReportError(path + ": cannot replace the file");
    }
}

std::string Report::to_csv() const {
    std::ostringstream os;
    os.precision(9);
    auto quote = [](const std::string& s) {
        if (s.find_first_of(",\"\n") == std::string::npos)
            return s;
        std::string q = "\"";
        for (char c : s)
            q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
    };
    os << "op,size,backend,device,arch,variant,status,samples,min_s,median_s,mean_s,p90_s,stddev_s,rel_noise,"
          "stop_reason,gbps,gflops,bandwidth_fraction,flops_fraction,parity,max_abs_error,max_rel_error,atol,rtol,"
          "reason\n";
    for (const auto& r : rows) {
        const auto& s = r.spec;
        os << quote(s.op) << ',' << quote(s.size) << ',' << quote(s.backend) << ',' << quote(s.device) << ','
           << quote(s.arch) << ',' << quote(s.variant) << ',' << r.status << ',' << r.stats.count << ','
           << r.stats.min << ',' << r.stats.median << ',' << r.stats.mean << ',' << r.stats.p90 << ','
           << r.stats.stddev << ',' << r.stats.rel_noise << ',' << r.stop_reason << ',' << r.gbps << ','
           << r.gflops << ',' << r.bandwidth_fraction << ',' << r.flops_fraction << ',' << r.parity.verdict()
           << ',' << r.parity.max_abs_error << ',' << r.parity.max_rel_error << ',' << r.parity.tolerance.atol
           << ',' << r.parity.tolerance.rtol << ',' << quote(r.reason) << '\n';
    }
    return os.str();
}

} // namespace switchyard
