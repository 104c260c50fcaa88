// SPDX-License-Identifier: MIT
#include <switchyard/report/report.h>

#include <switchyard/report/csv.h>

#include "util/jsonread.h"
#include "util/safefile.h"
#include "util/textutil.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>

namespace switchyard {

void to_json(nlohmann::json& j, const Report& r) {
    j = {{"format", Report::kFormat},
         {"format_version", Report::kFormatVersion},
         {"context", r.context.to_json()},
         {"rows", r.rows}};
    auto dispatch = nlohmann::json::array();
    for (const auto& f : r.dispatch)
        dispatch.push_back(f.to_json());
    j["dispatch"] = std::move(dispatch);
}

void Report::annotate() {
    apply_reference_speedups(rows);
    dispatch = dispatch_findings(rows);
}

namespace {

// The format id (this one, or version 1's) and a version this core reads.
void check_format(const jsonread::Value& v) {
    const auto format = v.at("format");
    const auto id = format.str();
    const auto version = v.at("format_version").integer(0, 1 << 20);
    if (id != Report::kFormat && id != Report::kFormatV1)
        format.fail("expected '" + std::string(Report::kFormat) + "', got '" + id + "'");
    if (version > Report::kFormatVersion)
        v.at("format_version")
            .fail(std::to_string(version) + " is newer than this Switchyard reads (" +
                  std::to_string(Report::kFormatVersion) + ")");
}

} // namespace

void from_json(const nlohmann::json& j, Report& r) {
    try {
        const jsonread::Value v(j, "report");
        if (!j.is_object())
            v.fail("expected a JSON object");
        check_format(v);
        r.context = RunContext::from_json(v.at("context").expect(jsonread::Kind::Object).raw());
        // Row paths start at "rows" ("rows[3].samples[2]: ..."), as a reader of the file sees them.
        const auto* rows_json = j.contains("rows") ? &j["rows"] : nullptr;
        if (!rows_json || !rows_json->is_array())
            throw jsonread::Error("report.rows", "expected an array");
        const auto rows = jsonread::Value::at_path(*rows_json, "rows");
        r.rows.clear();
        r.rows.reserve(rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i)
            r.rows.push_back(rows[i].get<ProfileRow>());
        r.dispatch.clear();
        if (const auto d = v.find("dispatch")) {
            d->expect(jsonread::Kind::Array);
            for (std::size_t i = 0; i < d->size(); ++i)
                r.dispatch.push_back(DispatchFinding::from_json((*d)[i].raw()));
        }
        // Older reports have no speedups stored: derive them (the rows are all there).
        if (std::none_of(r.rows.begin(), r.rows.end(),
                         [](const ProfileRow& row) { return row.reference_speedup > 0; }))
            apply_reference_speedups(r.rows);
    } catch (const ReportError&) {
        throw;
    } catch (const std::exception& e) {
        throw ReportError(e.what());
    }
}

nlohmann::json Report::to_json() const {
    return *this;
}

Report Report::from_json(const nlohmann::json& j) {
    Report r;
    switchyard::from_json(j, r);
    return r;
}

Report Report::parse(std::string_view text, const std::string& origin) {
    if (text.size() > kMaxBytes)
        throw ReportError(origin + ": " + std::to_string(text.size()) +
                          " bytes is larger than the " + std::to_string(kMaxBytes >> 20) +
                          " MiB a report may have");
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        throw ReportError(origin + ": empty file, not a report");
    nlohmann::json j;
    jsonread::ParseStats stats;
    try {
        jsonread::ParseLimits limits;
        limits.max_depth = kMaxDepth;
        limits.max_numbers_per_array = kMaxSamplesPerRow;
        j = jsonread::parse(text, limits, &stats);
    } catch (const jsonread::ParseError& e) {
        throw ReportError(
            origin + ": " +
            (e.truncated() ? "truncated JSON (the file ends early)" : "malformed JSON") +
            " at byte " + std::to_string(e.byte()) + " (" + e.position() + "): " + e.message());
    } catch (const std::exception& e) {
        throw ReportError(origin + ": cannot parse: " + e.what());
    }
    try {
        auto report = from_json(j);
        if (stats.arrays_capped)
            report.warnings.push_back(origin + ": " + std::to_string(stats.arrays_capped) +
                                      " arrays (row samples) hold more than " +
                                      std::to_string(kMaxSamplesPerRow) + " numbers, up to " +
                                      std::to_string(stats.longest_array) + "; the first " +
                                      std::to_string(kMaxSamplesPerRow) + " of each are used and " +
                                      std::to_string(stats.numbers_dropped) + " were ignored");
        return report;
    } catch (const ReportError& e) {
        throw ReportError(origin + ": " + e.what());
    }
}

Report Report::load(const std::string& path) {
    try {
        // "-" is the standard input; a named pipe (or /dev/stdin on a pipe) is read to its
        // end; a folder, a device or a socket is refused without reading it.
        auto in = path == "-"
                      ? safefile::InputFile::standard_input()
                      : safefile::InputFile(path, safefile::InputFile::Accept::RegularFileOrPipe);
        return parse(in.read_all(kMaxBytes, "report"), path == "-" ? "standard input" : path);
    } catch (const safefile::Error& e) {
        throw ReportError(e.what());
    }
}

void Report::save(const std::string& path) const {
    try {
        safefile::write_file(path, jsonread::dump(to_json(), 1) + "\n");
    } catch (const safefile::Error& e) {
        throw ReportError(e.what());
    }
}

void Report::check_writable(const std::string& path) {
    try {
        safefile::check_writable(path);
    } catch (const safefile::Error& e) {
        throw ReportError(e.what());
    }
}

std::string Report::save_with_fallback(const std::string& path, std::string& why) const {
    try {
        save(path);
        return {};
    } catch (const ReportError& e) {
        why = e.what();
    }
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = tmp && *tmp ? tmp : "/tmp";
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
    const std::string fallback =
        dir + "/switchyard-report-" + stamp + "-" + std::to_string(::getpid()) + ".json";
    try {
        save(fallback);
    } catch (const ReportError& e) {
        throw ReportError(why + "; the fallback " + fallback +
                          " could not be written either: " + e.what());
    }
    return fallback;
}

std::vector<std::string> Report::files_in(const std::string& folder) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw ReportError(folder + ": not a folder");
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(folder, ec))
        if (e.path().extension() == ".json" && e.is_regular_file(ec) &&
            e.path().filename().string().rfind("report", 0) == 0)
            found.push_back(e.path().string());
    if (ec)
        throw ReportError(folder + ": cannot list the folder: " + ec.message());
    std::sort(found.begin(), found.end());
    return found;
}

std::string Report::to_csv() const {
    std::ostringstream os;
    os.precision(9);
    // A field as RFC 4180 writes it, valid UTF-8 whatever a report or plugin put in it.
    const auto quote = [](const std::string& raw) { return csv_field(raw); };
    os << "op,size,backend,device,arch,variant,status,samples,min_s,median_s,mean_s,p90_s,stddev_s,"
          "rel_noise,"
          "stop_reason,gbps,gflops,level,ceiling_id,ceiling_value,ceiling_fraction,"
          "speedup_vs_reference,resolved,clock_ghz,clock_samples_discarded,clock_method,"
          "clock_none_reason,memory_probe,"
          "memory_gbps,memory_windows,pinned_cpu,parity,max_abs_error,"
          "max_rel_error,atol,rtol,"
          "reason\n";
    for (const auto& r : rows) {
        const auto& s = r.spec;
        os << quote(s.op) << ',' << quote(s.size) << ',' << quote(s.backend) << ','
           << quote(s.device) << ',' << quote(s.arch) << ',' << quote(s.variant) << ','
           << to_string(r.status) << ',' << r.stats.count << ',' << r.stats.min << ','
           << r.stats.median << ',' << r.stats.mean << ',' << r.stats.p90 << ',' << r.stats.stddev
           << ',';
        if (r.stats.noise_known()) // empty: one sample has no spread
            os << r.stats.rel_noise;
        os << ',' << r.stop_reason << ',' << r.gbps << ',' << r.gflops << ',' << quote(r.level)
           << ',' << quote(r.ceiling_id) << ',' << r.ceiling_value << ',' << r.ceiling_fraction
           << ',' << r.reference_speedup << ',' << (s.resolved ? 1 : 0) << ',';
        // The clock, or (empty GHz) why the row has none.
        if (r.clock.measured())
            os << r.clock.median_ghz;
        os << ',' << r.clock.samples_discarded << ',' << quote(r.clock.method) << ','
           << quote(r.clock.none_reason) << ',';
        // The memory beside a DRAM row (ProfileRow::memory): empty fields for other rows, so
        // no row reads as having had a memory of 0 GB/s.
        if (r.memory.measured())
            os << quote(r.memory.probe) << ',' << r.memory.median_gbs << ',' << r.memory.windows;
        else
            os << ",,";
        // The CPU a 1-thread row ran on (ProfileRow::pinned_cpu); empty for rows not pinned.
        os << ',';
        if (r.pinned_cpu >= 0)
            os << r.pinned_cpu;
        os << ',' << r.parity.verdict() << ',' << r.parity.max_abs_error << ','
           << r.parity.max_rel_error << ',' << r.parity.tolerance.atol << ','
           << r.parity.tolerance.rtol << ',' << quote(r.reason) << '\n';
    }
    return os.str();
}

} // namespace switchyard
