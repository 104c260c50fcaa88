// SPDX-License-Identifier: MIT
#include <switchyard/report/abreport.h>

#include "util/jsonread.h"
#include "util/safefile.h"
#include "util/textutil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace switchyard {

namespace ab_detail {

std::string printf_text(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string padded(std::string s, std::size_t width) {
    if (s.size() < width)
        s.append(width - s.size(), ' ');
    return s;
}

} // namespace ab_detail

std::string AbSide::describe() const {
    const std::string plugins =
        plugin_dir.empty() ? "the default plugins" : "plugins " + plugin_dir;
    const std::string tuned = tuning.empty()        ? "the machine's tuning"
                              : tuning == kNoTuning ? "no tuning"
                                                    : "tuning " + tuning;
    return plugins + ", " + tuned;
}

nlohmann::json AbSide::to_json() const {
    return {{"plugin_dir", plugin_dir}, {"tuning", tuning}};
}

AbSide AbSide::from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "side");
    v.expect(jsonread::Kind::Object);
    AbSide s;
    s.plugin_dir = v.str("plugin_dir", std::string());
    s.tuning = v.str("tuning", std::string());
    return s;
}

bool AbRow::identical_code() const {
    return !a.spec.code.build_id.empty() && a.spec.code == b.spec.code &&
           a.spec.arch == b.spec.arch && a.spec.variant == b.spec.variant;
}

void AbReport::judge() {
    std::vector<std::vector<double>> ratios;
    std::vector<bool> identical;
    for (const auto& r : rows) {
        ratios.push_back(r.log_ratios);
        identical.push_back(r.identical_code());
    }
    const auto results = judge_paired(ratios, options, identical);
    for (std::size_t i = 0; i < rows.size(); ++i)
        rows[i].result = results[i];
}

std::size_t AbReport::count(Verdict v) const {
    return std::size_t(std::count_if(rows.begin(), rows.end(),
                                     [&](const AbRow& r) { return r.result.verdict == v; }));
}

nlohmann::json AbReport::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : rows)
        list.push_back({{"a", r.a.to_json()},
                        {"b", r.b.to_json()},
                        {"log_ratios", r.log_ratios},
                        {"verdict", r.result.to_json()}});
    return {{"format", kFormat},
            {"format_version", kFormatVersion},
            {"a", a.to_json()},
            {"b", b.to_json()},
            {"pairs", pairs},
            {"min_pairs", min_pairs},
            {"options", options.to_json()},
            {"context", context.to_json()},
            {"context_b", context_b.to_json()},
            {"rows", list},
            {"counts",
             {{"same", count(Verdict::Same)},
              {"faster", count(Verdict::Faster)},
              {"slower", count(Verdict::Slower)},
              {"ambiguous", count(Verdict::Ambiguous)}}}};
}

AbReport AbReport::from_json(const nlohmann::json& j) {
    try {
        const jsonread::Value v(j, "ab");
        v.expect(jsonread::Kind::Object);
        if (const auto id = v.str("format"); id != kFormat)
            v.at("format").fail("expected '" + std::string(kFormat) + "', got '" + id + "'");
        if (v.integer("format_version") > kFormatVersion)
            v.at("format_version").fail("newer than this Switchyard reads");
        AbReport r;
        r.a = AbSide::from_json(v.at("a").raw());
        r.b = AbSide::from_json(v.at("b").raw());
        r.pairs = v.integer("pairs", 0, 0, std::int64_t(1) << 20);
        r.min_pairs = v.integer("min_pairs", 0, 0, std::int64_t(1) << 20);
        if (const auto o = v.find("options")) {
            r.options.fdr = o->num("fdr", r.options.fdr);
            r.options.min_effect = o->num("min_effect", r.options.min_effect);
        }
        r.context = RunContext::from_json(v.at("context").expect(jsonread::Kind::Object).raw());
        if (const auto cb = v.find("context_b"))
            r.context_b = RunContext::from_json(cb->expect(jsonread::Kind::Object).raw());
        const auto rows = v.at("rows").expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto row = rows[i];
            AbRow x;
            x.a = row.at("a").get<ProfileRow>();
            x.b = row.at("b").get<ProfileRow>();
            const auto lr = row.at("log_ratios").expect(jsonread::Kind::Array);
            for (std::size_t k = 0; k < lr.size(); ++k)
                x.log_ratios.push_back(lr[k].num());
            x.result = PairedComparison::from_json(row.at("verdict").raw());
            r.rows.push_back(std::move(x));
        }
        return r;
    } catch (const ReportError&) {
        throw;
    } catch (const std::exception& e) {
        throw ReportError(e.what());
    }
}

AbReport AbReport::load(const std::string& path) {
    try {
        auto in = safefile::InputFile(path, safefile::InputFile::Accept::RegularFileOrPipe);
        const auto text = in.read_all(Report::kMaxBytes, "A/B report");
        return from_json(jsonread::parse(text));
    } catch (const safefile::Error& e) {
        throw ReportError(e.what());
    } catch (const ReportError& e) {
        throw ReportError(path + ": " + e.what());
    } catch (const std::exception& e) {
        throw ReportError(path + ": " + e.what());
    }
}

void AbReport::save(const std::string& path) const {
    try {
        safefile::write_file(path, jsonread::dump(to_json(), 1) + "\n");
    } catch (const safefile::Error& e) {
        throw ReportError(e.what());
    }
}

std::string AbReport::to_text() const {
    using ab_detail::padded;
    using ab_detail::printf_text;
    std::ostringstream os;
    os << "A: " << text::untrusted(a.describe()) << "\nB: " << text::untrusted(b.describe())
       << "\nVerdicts: " << paired_rule(options) << ".\n\n";
    os << padded("op", 16) << ' ' << padded("size", 14) << ' ' << padded("device", 8) << ' '
       << padded("arch/variant", 22) << ' ' << padded("A median", 12) << ' '
       << padded("B median", 12) << ' ' << padded("pairs", 5) << ' ' << padded("B/A", 7) << ' '
       << padded("90% interval", 15) << ' ' << padded("q", 8) << " verdict\n";
    for (const auto& r : rows) {
        const auto& c = r.result;
        const auto av =
            r.a.spec.arch + "/" + r.a.spec.variant +
            (r.b.spec.arch + "/" + r.b.spec.variant != r.a.spec.arch + "/" + r.a.spec.variant
                 ? " vs " + r.b.spec.arch + "/" + r.b.spec.variant
                 : "");
        os << padded(text::untrusted(r.a.spec.op), 16) << ' '
           << padded(text::untrusted(r.a.spec.size), 14) << ' '
           << padded(text::untrusted(r.a.spec.device), 8) << ' ' << padded(text::untrusted(av), 22)
           << ' '
           << padded(r.a.measured() ? printf_text("%.3fus", r.a.stats.median * 1e6)
                                    : std::string(to_string(r.a.status)),
                     12)
           << ' '
           << padded(r.b.measured() ? printf_text("%.3fus", r.b.stats.median * 1e6)
                                    : std::string(to_string(r.b.status)),
                     12)
           << ' ' << padded(std::to_string(c.pairs), 5) << ' '
           << padded(c.ratio > 0 ? printf_text("%.3f", c.ratio) : "-", 7) << ' '
           << padded(c.ratio > 0
                         ? printf_text("%.3f", c.ci_low) + "-" + printf_text("%.3f", c.ci_high)
                         : "-",
                     15)
           << ' ' << padded(printf_text("%.2g", c.q_value), 8) << ' ' << to_string(c.verdict)
           << (c.note.empty() ? "" : " - ") << text::untrusted(c.note) << "\n";
    }
    os << "\n"
       << count(Verdict::Same) << " same, " << count(Verdict::Faster) << " faster, "
       << count(Verdict::Slower) << " slower, " << count(Verdict::Ambiguous) << " ambiguous";
    if (const auto machine = count(Verdict::Machine))
        os << ", " << machine << " machine (identical code: a difference the machine made)";
    os << " (B against A)\n";
    // What the run's workers said of their measurements (the shared buffers' pages, a cap).
    std::vector<std::string> said;
    for (const auto* c : {&context, &context_b})
        for (const auto& w : c->warnings)
            if (std::find(said.begin(), said.end(), w) == said.end())
                said.push_back(w);
    for (const auto& w : said)
        os << "warning: " << text::untrusted(w) << "\n";
    return os.str();
}

} // namespace switchyard
